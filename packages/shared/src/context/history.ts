import { stripUuids } from '../text';

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

/** Rough token count (about four characters a token): good enough for a budget. */
export function estimateTokens(message: StoredMessage): number {
  const calls = message.tool_calls?.reduce((sum, call) => sum + call.name.length + call.arguments.length, 0) ?? 0;
  return Math.ceil((message.content.length + calls) / 4) + 4;
}

/**
 * Keeps the newest messages that fit the token budget, cutting only where a user message starts
 * so an assistant's tool calls always travel with their results; what is left out is replaced by
 * a summary. Tool calls without results (a cancelled turn) get a stand-in result so the
 * conversation stays well-formed for the model.
 */
export function buildHistory(all: StoredMessage[], tokenBudget: number, summaryChars = 2_000): HistoryWindow {
  const messages = completeToolResults(all).map(sanitize);
  let start = messages.length;
  let used = 0;
  for (let i = messages.length - 1; i >= 0; i--) {
    used += estimateTokens(messages[i] as StoredMessage);
    if (used > tokenBudget) break;
    if (messages[i]?.role === 'user') start = i;
  }
  // The newest exchange is always kept, even over budget: it holds the current question.
  if (start === messages.length) start = messages.findLastIndex((m) => m.role === 'user');
  if (start <= 0) return { messages, summary: null };
  return { messages: messages.slice(start), summary: summarize(messages.slice(0, start), summaryChars) };
}

function sanitize(message: StoredMessage): StoredMessage {
  return {
    ...message,
    content: stripUuids(message.content),
    tool_calls: message.tool_calls?.map((call) => ({ ...call, arguments: stripUuids(call.arguments) })) ?? null,
  };
}

function completeToolResults(messages: StoredMessage[]): StoredMessage[] {
  const answered = new Set(messages.filter((m) => m.role === 'tool').map((m) => m.tool_call_id));
  const out: StoredMessage[] = [];
  for (const message of messages) {
    out.push(message);
    for (const call of message.tool_calls ?? []) {
      if (!answered.has(call.id)) {
        out.push({
          role: 'tool',
          content: '{"success":false,"error":"This call was not run (the turn ended first)."}',
          tool_calls: null,
          tool_call_id: call.id,
        });
      }
    }
  }
  return out;
}

function summarize(older: StoredMessage[], maxChars: number): string {
  const lines = older
    .filter((m) => (m.role === 'user' || m.role === 'assistant') && m.content.trim() !== '')
    .map((m) => `${m.role === 'user' ? 'User' : 'Assistant'}: ${oneLine(m.content, 160)}`);
  const kept: string[] = [];
  let size = 0;
  // The most recent of the older lines matter most; keep as many as fit, in order.
  for (let i = lines.length - 1; i >= 0 && size < maxChars; i--) {
    kept.unshift(lines[i] as string);
    size += (lines[i] as string).length;
  }
  const omitted = lines.length - kept.length;
  return [
    `Summary of ${older.length} earlier messages of this conversation${omitted > 0 ? ` (${omitted} oldest lines omitted)` : ''}:`,
    ...kept,
  ].join('\n');
}

function oneLine(text: string, max: number): string {
  const flat = text.replace(/\s+/g, ' ').trim();
  return flat.length > max ? `${flat.slice(0, max - 1)}…` : flat;
}
