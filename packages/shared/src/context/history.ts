import { createHash } from 'node:crypto';
import { clipText, stripUuids } from '../text';

export interface StoredMessage {
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls: { id: string; name: string; arguments: string }[] | null;
  tool_call_id: string | null;
}

export interface HistoryWindow {
  messages: StoredMessage[];
  /** A short account of the messages left out, or null when everything fits. */
  summary: string | null;
}

/** The characters of a message's text and tool calls. */
export function messageChars(message: StoredMessage): number {
  const calls = message.tool_calls?.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0) ?? 0;
  return message.content.length + calls;
}

/** Rough token count (about four characters a token): good enough for a budget. */
export function estimateTokens(message: StoredMessage): number {
  return Math.ceil(messageChars(message) / 4) + 4;
}

/**
 * Keeps the newest messages that fit the token budget, cutting only where a user message starts
 * so an assistant's tool calls always travel with their results; what is left out is replaced by
 * a summary. Tool calls without results (a cancelled turn) get a stand-in result so the
 * conversation stays well-formed for the model. `cutShort`: `all` is a long session's newest
 * messages, not its whole conversation (see windowStart).
 */
export function buildHistory(
  all: readonly StoredMessage[],
  tokenBudget: number,
  { cutShort = false, summaryChars = 2_000 }: { cutShort?: boolean; summaryChars?: number } = {},
): HistoryWindow {
  const messages = completeToolResults(all).map(sanitize);
  const total = messages.reduce((sum, message) => sum + estimateTokens(message), 0);
  if (total <= tokenBudget) return { messages, summary: null };
  // The summary travels with the window, so its size comes out of the same budget.
  const { from, start } = windowStart(messages, Math.max(0, tokenBudget - Math.ceil(summaryChars / 4)), cutShort);
  if (start <= 0) return { messages, summary: null };
  return { messages: messages.slice(start), summary: summarizeMessages(messages.slice(from, start), summaryChars) };
}

/**
 * About one user message in this many is an anchor (see windowStart), chosen by its text alone.
 * Fewer anchors move less often but may be missing from the newest 500 messages read.
 */
const ANCHOR_EVERY = 32;

/**
 * Where the window starts, found by replaying the conversation as it grew: the start moves only
 * when the window passes its budget, and then far enough to leave it half full (the newest
 * exchange is always kept, even over budget). A window sliding by one exchange every turn would
 * change the summary and the first messages of every request, so a provider could serve none of
 * their history from its prompt cache (docs/memory.md#request-layout); this way the requests of
 * the turns that fill half the budget share their summary and history.
 *
 * A long session's messages are read from its newest 500 on (`cutShort`), a first message that
 * moves every turn: a replay from there would cut somewhere else almost every turn, and a summary
 * of what it cut would change every turn too. So there the replay, and the summary, start at the
 * first anchor read (before the newest question), a user message picked by a hash of its text as
 * content-defined chunking picks its boundaries, which stays first for about ANCHOR_EVERY
 * exchanges; until what follows it passes the budget, or when none is read, at the first message.
 */
function windowStart(messages: readonly StoredMessage[], budget: number, cutShort: boolean): { from: number; start: number } {
  if (!cutShort) return { from: 0, start: replayedStart(messages, 0, budget) };
  const newest = messages.findLastIndex((message) => message.role === 'user');
  const anchor = messages.findIndex((message, i) => i < newest && message.role === 'user' && isAnchor(message));
  const after = anchor < 0 ? 0 : messages.slice(anchor).reduce((sum, message) => sum + estimateTokens(message), 0);
  const from = after > budget ? anchor : 0;
  return { from, start: replayedStart(messages, from, budget) };
}

function isAnchor(message: StoredMessage): boolean {
  return createHash('sha1').update(message.content).digest().readUInt32BE(0) % ANCHOR_EVERY === 0;
}

function replayedStart(messages: readonly StoredMessage[], from: number, budget: number): number {
  let start = from;
  let used = 0;
  let newestUser = -1;
  for (let end = from; end < messages.length; end++) {
    used += estimateTokens(messages[end] as StoredMessage);
    if (messages[end]?.role === 'user') newestUser = end;
    if (used <= budget) continue;
    while (start < newestUser && (used > budget / 2 || messages[start]?.role !== 'user')) {
      used -= estimateTokens(messages[start] as StoredMessage);
      start += 1;
    }
  }
  return start;
}

function sanitize(message: StoredMessage): StoredMessage {
  return {
    ...message,
    content: stripUuids(message.content),
    tool_calls: message.tool_calls?.map((call) => ({ ...call, arguments: stripUuids(call.arguments) })) ?? null,
  };
}

/**
 * The stand-in result of a call that has none: its turn ended (cancelled, interrupted, failed)
 * before it ran, or while it ran: a tool already started finishes, and its result comes later.
 * So the model is not told it was not done, only to check before doing it again.
 */
const NO_RESULT = JSON.stringify({
  success: false,
  error: 'No result was recorded for this call: its turn ended before it ran, or while it ran.',
  hint: 'If it changes something, check whether it was done before doing it again.',
});

/**
 * Puts each tool call's result right after the assistant message that made it, as the model API
 * requires: a message stored in between (a reminder that fired while a turn waited for approval)
 * moves after the results; a call without a result (a cancelled turn) gets a stand-in; a result
 * without its call is dropped.
 */
function completeToolResults(messages: readonly StoredMessage[]): StoredMessage[] {
  // Where each call id's results are, in order: a call takes the first one after it, so a step
  // reads a long history in one pass instead of searching it again for every call.
  const results = new Map<string, number[]>();
  messages.forEach((message, index) => {
    if (message.role !== 'tool' || message.tool_call_id === null) return;
    const found = results.get(message.tool_call_id);
    if (found) found.push(index);
    else results.set(message.tool_call_id, [index]);
  });
  const out: StoredMessage[] = [];
  messages.forEach((message, index) => {
    if (message.role === 'tool') return;
    out.push(message);
    for (const call of message.tool_calls ?? []) {
      const queue = results.get(call.id);
      // A result before this call can be no later call's either (they come after this one).
      while (queue !== undefined && queue.length > 0 && (queue[0] as number) < index) queue.shift();
      const found = queue?.shift();
      out.push(
        found !== undefined
          ? (messages[found] as StoredMessage)
          : {
              role: 'tool',
              content: NO_RESULT,
              tool_calls: null,
              tool_call_id: call.id,
            },
      );
    }
  });
  return out;
}

/** Lines of one message each; shorter lines before fewer lines, so every part stays represented. */
const LINE_CHARS = { max: 160, min: 60 };

/**
 * An extractive account of `older` within maxChars: one line per user or assistant message,
 * shortened to fit. When even the shortest lines do not fit, the conversation's opening lines
 * and its most recent ones are kept with a marker for the gap, so the model still sees how the
 * conversation began.
 */
export function summarizeMessages(older: StoredMessage[], maxChars: number): string {
  const spoken = older.filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content.trim() !== '');
  const width = Math.max(LINE_CHARS.min, Math.min(LINE_CHARS.max, Math.floor(maxChars / Math.max(1, spoken.length)) - 12));
  const lines = spoken.map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${oneLine(m.content, width)}`);
  const header = `Summary of ${older.length} earlier messages of this conversation:`;
  const all = [header, ...lines].join('\n');
  if (all.length <= maxChars) return all;
  // Room for the header and the gap marker, so the whole stays within maxChars.
  const room = maxChars - header.length - 48;
  const head = takeWithin(lines, Math.floor(room / 4));
  const tail = takeWithin([...lines].reverse(), room - head.size).lines.reverse();
  const omitted = lines.length - head.lines.length - tail.length;
  return [header, ...head.lines, `[... ${omitted} lines in between omitted ...]`, ...tail].join('\n');
}

function takeWithin(lines: string[], maxChars: number): { lines: string[]; size: number } {
  const kept: string[] = [];
  let size = 0;
  for (const line of lines) {
    if (size + line.length + 1 > maxChars) break;
    kept.push(line);
    size += line.length + 1;
  }
  return { lines: kept, size };
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return clipText(flat, max);
}
