import type { Queryable } from '../db';
import { messageChars, type StoredMessage } from './history';

interface Window {
  /** The window's message ids, ascending, and the messages themselves, in the same order. */
  readonly ids: readonly number[];
  readonly messages: readonly StoredMessage[];
  /** The characters its messages hold: what it costs to keep. */
  readonly chars: number;
}

interface WindowRow extends Partial<StoredMessage> {
  /** How many of the window's messages have an id up to the newest one held, and the first of them. */
  known: number;
  known_from: number | null;
  /** A message added since, or null (with the rest) when there is none. */
  id: number | null;
}

/**
 * One statement: of the session's latest `$2` messages, how many are at or below `$3` (the newest
 * id held) and the first of those, and then the window's messages above `$3` in full. Both are
 * range scans of the `(session_id, id)` index, the first counted in one pass (a CTE read twice
 * took 0.40 ms against 0.29 for a window of 500, at psql); only the added messages are sent.
 */
const WINDOW_SINCE = `
  WITH held AS (
    SELECT count(*) FILTER (WHERE id <= $3)::int AS known, min(id) FILTER (WHERE id <= $3) AS known_from, min(id) AS first
    FROM (SELECT id FROM messages WHERE session_id = $1 ORDER BY id DESC LIMIT $2) AS recent)
  SELECT held.known, held.known_from, m.id, m.role, m.content, m.tool_calls, m.tool_call_id
  FROM held LEFT JOIN messages m ON m.session_id = $1 AND m.id > $3 AND m.id >= held.first
  ORDER BY m.id`;

/** The session's messages from its newest user message on, oldest first (none when it has none). */
const SINCE_NEWEST_QUESTION = `
  SELECT role, content, tool_calls, tool_call_id FROM messages
  WHERE session_id = $1 AND id >= (SELECT max(id) FROM messages WHERE session_id = $1 AND role = 'user')
  ORDER BY id`;

/**
 * The latest `rows` messages of each session whose steps this process ran lately, so that a
 * model step reads only the messages added since its session's last one. Read whole, the window
 * was up to `rows` messages on every step (tens of kilobytes that PostgreSQL sent and this
 * process parsed again each time, the longer the conversation the more). The sessions read least
 * recently are dropped to keep the messages held within `maxChars` characters.
 *
 * A message never changes once written, but messages are not always committed in id order (a
 * reminder's message and a tool's result may commit either way round) and an erasure deletes
 * them. So each read also counts the window's messages up to the newest id held: when that count
 * or its first id disagrees with what is held, the window is read again whole. The messages
 * answered are shared with the cache: callers must not change them.
 */
export class SessionHistories {
  private readonly windows = new Map<string, Window>();
  private chars = 0;

  constructor(
    readonly rows: number,
    private readonly maxChars: number,
  ) {}

  /**
   * The session's latest `rows` messages, oldest first; more when its newest user message is
   * further back (a turn of many tool calls must not lose the question it answers, nor its calls
   * their results). That case is rare and read on its own, so a step's usual read stays one
   * statement over the window.
   */
  async latest(db: Queryable, sessionId: string): Promise<readonly StoredMessage[]> {
    const held = this.windows.get(sessionId) ?? EMPTY;
    const window = await this.extend(db, sessionId, held);
    this.keep(sessionId, window);
    if (window.messages.length < this.rows || window.messages.some((message) => message.role === 'user')) return window.messages;
    const sinceQuestion = await db.query<StoredMessage>(SINCE_NEWEST_QUESTION, [sessionId]);
    return sinceQuestion.rows.length > 0 ? sinceQuestion.rows : window.messages;
  }

  /** `held` with what was added since; the window read whole when `held` no longer agrees with the database. */
  private async extend(db: Queryable, sessionId: string, held: Window): Promise<Window> {
    const { rows } = await db.query<WindowRow>(WINDOW_SINCE, [sessionId, this.rows, held.ids.at(-1) ?? 0]);
    const { known, known_from: knownFrom } = rows[0] as WindowRow;
    const added = rows.filter((row) => row.id !== null);
    const addedMessages = added.map(
      ({ role, content, tool_calls, tool_call_id }) => ({ role, content, tool_calls, tool_call_id }) as StoredMessage,
    );
    // The window's messages up to the newest one held must be the newest `known` of those held,
    // the first of them at `first`.
    const first = held.ids.length - known;
    const agrees =
      known === 0
        ? // None held is in the window: all of it was added since, or there was nothing held.
          held.ids.length === 0 || added.length === this.rows
        : first >= 0 && held.ids[first] === knownFrom;
    // Nothing held always agrees, so this reads once more at most.
    if (!agrees) return this.extend(db, sessionId, EMPTY);
    // Those held before it left the window.
    const from = known === 0 ? held.ids.length : first;
    return {
      ids: [...held.ids.slice(from), ...added.map((row) => row.id as number)],
      messages: [...held.messages.slice(from), ...addedMessages],
      chars: held.chars - charsOf(held.messages.slice(0, from)) + charsOf(addedMessages),
    };
  }

  /** Keeps `window` as the session's, most recent last, dropping the least recent over maxChars. */
  private keep(sessionId: string, window: Window): void {
    const before = this.windows.get(sessionId);
    if (before) {
      this.chars -= before.chars;
      this.windows.delete(sessionId);
    }
    this.windows.set(sessionId, window);
    this.chars += window.chars;
    for (const [id, oldest] of this.windows) {
      if (this.chars <= this.maxChars) break;
      this.windows.delete(id);
      this.chars -= oldest.chars;
    }
  }
}

const EMPTY: Window = { ids: [], messages: [], chars: 0 };

function charsOf(messages: readonly StoredMessage[]): number {
  return messages.reduce((sum, message) => sum + messageChars(message), 0);
}
