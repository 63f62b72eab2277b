import { clipText, stripUuids } from '@assistant/shared';

export interface DigestMessage {
  id: number;
  role: 'user' | 'assistant' | 'tool';
  content: string;
  tool_calls: { id: string; name: string; arguments: string }[] | null;
}

/** What the model reads of one session: long lines are cut, the whole stays under this. */
export const TRANSCRIPT_LIMITS = { lineChars: 1_000, totalChars: 40_000 };

export const DIGEST_INSTRUCTIONS = `You write session digests for a personal assistant's long-term memory.
You get the transcript of one conversation (or of its part since the last digest).
Write, in the language of the conversation:
1. One to three sentences on what happened: what the user asked for and what was done.
2. A short list "Facts worth remembering": lasting facts the user stated about themselves, their preferences, people, plans and decisions. Only what the transcript says; no guesses.
Plain Markdown, no headings, at most 150 words. Skip small talk. If nothing is worth remembering, say in one line what happened.`;

function line(message: DigestMessage): string {
  const calls = (message.tool_calls ?? []).map((call) => `${call.name} ${call.arguments}`).join('; ');
  const text =
    message.role === 'user'
      ? `User: ${message.content}`
      : message.role === 'tool'
        ? `Tool result: ${toolOutcome(message.content)}`
        : [message.content && `Assistant: ${message.content}`, calls && `Assistant called: ${calls}`].filter(Boolean).join('\n');
  const flat = stripUuids(text.trim());
  return clipText(flat, TRANSCRIPT_LIMITS.lineChars);
}

/** Tool results are JSON for the model; their message (or error) is what a digest needs. */
function toolOutcome(content: string): string {
  try {
    const result = JSON.parse(content) as { success?: boolean; message?: unknown; error?: unknown };
    if (result.success === true && typeof result.message === 'string') return result.message;
    if (result.success === false) return `failed: ${String(result.error)}`;
  } catch {
    // Not JSON: the raw text is the best there is.
  }
  return content;
}

/**
 * The transcript of the oldest messages that fit TRANSCRIPT_LIMITS, and the id of the last one
 * included: a digest covers exactly those, and the rest wait for the next round.
 */
export function digestTranscript(messages: DigestMessage[]): { text: string; lastId: number } | undefined {
  const lines: string[] = [];
  let size = 0;
  let lastId: number | undefined;
  for (const message of messages) {
    const text = line(message);
    if (lastId !== undefined && size + text.length + 1 > TRANSCRIPT_LIMITS.totalChars) break;
    if (text !== '') lines.push(text);
    size += text.length + 1;
    lastId = message.id;
  }
  return lastId === undefined ? undefined : { text: lines.join('\n'), lastId };
}
