import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall } from './chat-model';
import { parseCommand, type PlannedCall } from './offline/command-table';
import { NO_TIME } from './offline/reminder-time';
import { splitCommands } from './offline/command-splitter';
import type { FoldedText } from './offline/folded-text';
import { languageOf, OFFLINE_TEXTS } from './offline/help-text';

export { OFFLINE_HELP, OFFLINE_HELP_PT } from './offline/help-text';

/** One turn plans at most this many tool calls, merged messages together (docs/agent.md#offline-planner); the answer says what was left out. */
export const MAX_OFFLINE_CALLS = 10;
/** The user's zone when the caller gives none (the default of DEFAULT_TIMEZONE). */
const DEFAULT_ZONE = 'UTC';

/** What the planner makes of a turn's messages. */
interface Plan {
  planned: PlannedCall[];
  /** The reminders said without a time of day, asked about rather than planned. */
  asked: number;
  /** The commands of the messages understood, planned, asked about or past the cap. */
  total: number;
  /** The messages left out because they are not commands. */
  notUnderstood: number;
}

/**
 * The calls of the first MAX_OFFLINE_CALLS commands of the turn's messages, in order. The cap is
 * per turn, so messages merged into one turn plan no more than one message could. A message with
 * a piece within the cap that is not a command is left out whole, as a single message always was
 * (its commands may build on each other), and the turn's other messages still run. A reminder
 * without a time of day is a command that takes its place under the cap but plans no call: the
 * others run, and the answer asks when (nothing builds on a reminder). Pieces past the cap are
 * only counted, never parsed: each reminder costs a chrono parse, and a turn's work must not grow
 * with what is not planned.
 */
function parseCommands(messages: string[], now: Date, timezone: string): Plan {
  const plan: Plan = { planned: [], asked: 0, total: 0, notUnderstood: 0 };
  for (const message of messages) {
    const pieces = splitCommands(message);
    const room = MAX_OFFLINE_CALLS - plan.planned.length - plan.asked;
    const commands = pieces.length > 0 ? parseFirst(pieces, room, now, timezone) : null;
    if (!commands) {
      plan.notUnderstood += 1;
      continue;
    }
    for (const command of commands) {
      if (command === NO_TIME) plan.asked += 1;
      else plan.planned.push(command);
    }
    plan.total += pieces.length;
  }
  return plan;
}

/** The commands of the first `room` pieces of a message, or null when one of those is not a command. */
function parseFirst(pieces: FoldedText[], room: number, now: Date, timezone: string): Array<PlannedCall | typeof NO_TIME> | null {
  const commands: Array<PlannedCall | typeof NO_TIME> = [];
  for (const piece of pieces.slice(0, room)) {
    const command = parseCommand(piece, { now, timezone });
    if (command === null) return null;
    commands.push(command);
  }
  return commands;
}

/**
 * The texts of the user messages the turn answers, oldest first: the newest `count` (several when
 * messages were merged into the turn, docs/agent.md#busy-sessions) of those after the last
 * assistant or tool message. An earlier turn's message that got no answer (it was cancelled) is
 * not acted on again. The turn's context, a system message right before the newest, is skipped.
 */
function turnMessages(messages: ChatMessage[], count: number): string[] {
  const answered = messages.findLastIndex((m) => m.role === 'assistant' || m.role === 'tool');
  return messages
    .slice(answered + 1)
    .flatMap((m) => (m.role === 'user' ? [m.content] : []))
    .slice(-count);
}

function describeResult(content: string): string {
  try {
    const result: unknown = JSON.parse(content);
    if (typeof result === 'object' && result !== null && 'success' in result) {
      const { success, message, error, hint } = result as Record<string, unknown>;
      if (success === true && typeof message === 'string') return message;
      if (success === false) return `Could not do that: ${String(error)}${typeof hint === 'string' && hint ? ` ${hint}` : ''}`;
    }
  } catch {
    // Not JSON: the raw text is the best summary there is.
  }
  return content;
}

/** The results of the last tool calls, one a line, then what that call's message said it left out. */
function summarise(messages: ChatMessage[]): string {
  const lastCall = messages.findLastIndex((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0);
  const results = messages.slice(lastCall + 1).filter((m) => m.role === 'tool');
  const note = messages[lastCall]?.content.trim();
  return [...results.map((m) => describeResult(m.content)), ...(note ? [note] : [])].join('\n');
}

/**
 * Stands in for a chat model when none is configured, so a fresh install still works end to end.
 * It is not a language model: it maps the plain commands listed in OFFLINE_HELP to the same tool
 * calls a model would make, and summarises the tool results in text.
 */
export class OfflinePlanner implements ChatModel {
  readonly name = 'offline';
  private readonly now: () => Date;

  constructor(options: { now?: () => Date } = {}) {
    this.now = options.now ?? (() => new Date());
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    throwIfAborted(request.signal);
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return this.answer(request, summarise(request.messages));
    if (last?.role !== 'user') return this.answer(request, OFFLINE_TEXTS.en.help);

    const messages = turnMessages(request.messages, request.turnMessages ?? 1);
    const texts = OFFLINE_TEXTS[languageOf(messages)];
    const { planned, asked, total, notUnderstood } = parseCommands(messages, this.now(), request.timezone ?? DEFAULT_ZONE);
    // A reminder without a time is asked about rather than set at a guessed one.
    if (planned.length === 0) return this.answer(request, asked > 0 ? texts.askTime : texts.help);
    const offered = new Set(request.tools.map((t) => t.name));
    const missing = [...new Set(planned.map((p) => p.tool).filter((tool) => !offered.has(tool)))];
    if (missing.length > 0) return this.answer(request, `${texts.missing(missing.join(', '))}\n\n${texts.help}`);
    // Ids stay unique across the conversation because every earlier assistant turn bumps k.
    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    const toolCalls: ToolCall[] = planned.map((p, i) => ({
      id: `offline_${turn}_${i + 1}`,
      name: p.tool,
      arguments: JSON.stringify(Object.fromEntries(Object.entries(p.args).filter(([, value]) => value !== undefined))),
    }));
    const notes = [
      ...(total > planned.length + asked ? [texts.capped(MAX_OFFLINE_CALLS, total)] : []),
      ...(asked > 0 ? [texts.askTime] : []),
      ...(notUnderstood > 0 ? [`${texts.leftOut(notUnderstood, messages.length)}\n\n${texts.help}`] : []),
    ];
    if (notes.length === 0) return { content: '', toolCalls };
    // Said now, like a model's words before its tool calls, and repeated in the final summary.
    const note = notes.join('\n\n');
    await this.answer(request, note);
    return { content: note, toolCalls };
  }

  private async answer(request: ChatRequest, content: string): Promise<ChatResponse> {
    for (const chunk of content.match(/\s*\S+\s*/g) ?? [content]) {
      throwIfAborted(request.signal);
      if (chunk) await request.onToken(chunk);
    }
    return { content, toolCalls: [] };
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('aborted');
}
