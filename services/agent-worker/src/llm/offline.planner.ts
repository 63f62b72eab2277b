import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall } from './chat-model';
import { parseCommand, type PlannedCall } from './offline/command-table';
import { splitCommands } from './offline/command-splitter';

/**
 * Stands in for a chat model when none is configured, so a fresh install still works end to end.
 * It is not a language model: it maps the plain commands listed in OFFLINE_HELP to the same tool
 * calls a model would make, and summarises the tool results in text.
 */
export const OFFLINE_HELP = `This is the built-in offline planner, not a language model: it only understands the commands below, in English or Portuguese. Set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server) to connect a real model.

Commands (chain up to 10 with ";", a new line, "and" or "e"):
- create folder Work in Projects | criar pasta Trabalho em Projetos
- create document Notes in Work with content Hello | criar documento Notas em Trabalho com conteúdo Olá
- rename folder Work to Office | renomear pasta Trabalho para Escritório
- rename document Notes to Minutes | renomear documento Notas para Ata
- move document Notes to Archive | mover documento Notas para Arquivo
- delete folder Old / delete document Draft | apagar pasta Antiga / excluir documento Rascunho
- list folder Work | o que tem na pasta Trabalho
- search for budget | procurar orçamento
- create habit meditation daily | criar hábito meditação diária
- rename habit yoga to stretching | renomear hábito yoga para alongamento
- delete habit yoga | apagar hábito yoga
- list habits | meus hábitos
- remind me tomorrow at 9 to call Ana | me lembra de ligar para Ana às 15h todo dia
- remind me every Monday at 8 to water the plants | me lembra daqui a 20 minutos de alongar
- list reminders / delete reminder reminder_1 | meus lembretes / apagar lembrete reminder_1
- create goal Run 10k by 2030-12-31 | criar meta Correr 10k até 2030-12-31
- list goals / delete goal goal_1 | minhas metas / apagar meta goal_1
- remember that I prefer tea | lembre que eu prefiro chá`;

/** One message plans at most this many tool calls (docs/agent.md#offline-planner); the answer says what was left out. */
export const MAX_OFFLINE_CALLS = 10;
/** The user's zone when the caller gives none (the default of DEFAULT_TIMEZONE). */
const DEFAULT_ZONE = 'UTC';

/**
 * The calls of the message's first MAX_OFFLINE_CALLS commands and how many commands it has, or
 * null when one of those is not a command. Later ones are only counted, never parsed: each
 * reminder costs a chrono parse, and a message's work must not grow with what is not planned.
 */
function parseCommands(message: string, now: Date, timezone: string): { planned: PlannedCall[]; total: number } | null {
  const pieces = splitCommands(message);
  const planned: PlannedCall[] = [];
  for (const piece of pieces.slice(0, MAX_OFFLINE_CALLS)) {
    const call = parseCommand(piece, { now, timezone });
    if (!call) return null;
    planned.push(call);
  }
  return planned.length > 0 ? { planned, total: pieces.length } : null;
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
    if (last?.role !== 'user') return this.answer(request, OFFLINE_HELP);

    const parsed = parseCommands(last.content, this.now(), request.timezone ?? DEFAULT_ZONE);
    if (!parsed) return this.answer(request, OFFLINE_HELP);
    const { planned, total } = parsed;
    const offered = new Set(request.tools.map((t) => t.name));
    const missing = [...new Set(planned.map((p) => p.tool).filter((tool) => !offered.has(tool)))];
    if (missing.length > 0) {
      return this.answer(request, `That needs ${missing.join(', ')}, which is not available right now.\n\n${OFFLINE_HELP}`);
    }
    // Ids stay unique across the conversation because every earlier assistant turn bumps k.
    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    const toolCalls: ToolCall[] = planned.map((p, i) => ({
      id: `offline_${turn}_${i + 1}`,
      name: p.tool,
      arguments: JSON.stringify(Object.fromEntries(Object.entries(p.args).filter(([, value]) => value !== undefined))),
    }));
    if (total === planned.length) return { content: '', toolCalls };
    // Said now, like a model's words before its tool calls, and repeated in the final summary.
    const note = `Only the first ${MAX_OFFLINE_CALLS} of your ${total} commands were planned (at most ${MAX_OFFLINE_CALLS} per message); send the others again.`;
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
