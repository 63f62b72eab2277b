import type { DbClient, Queryable } from '../db';
import type { ChannelAddress } from '../jobs';
import { ACTIVE_STATUSES, NOT_FINISHED_SQL } from './turn-status';

/** The head of a session's lane, as activateNext reads it with the session row locked. */
export interface QueuedTurn {
  id: string;
  user_id: string;
  session_key: string;
  /** turns.input, then every message merged into the turn (if_busy=merge), in arrival order. */
  inputs: string[];
  /**
   * False while the turn waits for the user's message rate to allow it, or for a voice note's
   * transcript (voice-holds.ts); a delayed lane job comes back when the wait ends at the latest.
   */
  due: boolean;
  origin: ChannelAddress | null;
  /** A turn that ran, was parked and, answered, waits for a free slot to go on (resuming.ts). */
  resumed: boolean;
}

/**
 * SQL: when a queued turn may start, NULL meaning now: after its start_after (the message rate)
 * and, while a voice note in it waits for its transcript, after voice_held_until.
 */
export const DUE_AT_SQL = `GREATEST(start_after, CASE WHEN voice_pending <> '[]'::jsonb THEN voice_held_until END)`;

export async function headOfLane(client: DbClient, sessionId: string): Promise<QueuedTurn | undefined> {
  const next = await client.query<QueuedTurn>(
    `SELECT id, user_id, session_key, ARRAY[input] || merged_inputs AS inputs, COALESCE(${DUE_AT_SQL} <= NOW(), true) AS due, origin,
       started_at IS NOT NULL AS resumed
     FROM turns WHERE session_id = $1 AND status = 'queued' ORDER BY lane_seq LIMIT 1`,
    [sessionId],
  );
  return next.rows[0];
}

/**
 * Whether the user has a free slot for one more running turn (MAX_ACTIVE_TURNS_PER_USER). A
 * transaction-scoped lock per user makes the count and the start that follows atomic across
 * sessions and worker copies. Only `running` turns count: one waiting for an approval or an
 * answer holds nothing (docs/agent.md#capacity), and parking it wakes the user's other lanes.
 */
export async function hasFreeSlot(client: DbClient, userId: string, maxActive: number): Promise<boolean> {
  await client.query(`SELECT ${slotLock('$1')}`, [userId]);
  const running = await client.query<{ running: number }>(`SELECT ${runningTurns('$1')} AS running`, [userId]);
  return (running.rows[0]?.running ?? 0) < maxActive;
}

/** How many of a user's turns hold a slot, as an SQL expression of the parameter holding the user's id. */
export function runningTurns(userIdParam: string): string {
  return `(SELECT COUNT(*)::int FROM turns WHERE user_id = ${userIdParam} AND status = 'running')`;
}

/**
 * The transaction-scoped lock on a user's slots, as an SQL expression of the parameter holding
 * the user's id. Whoever takes it also holds the session row of the lane it changes, taken first.
 */
export function slotLock(userIdParam: string): string {
  return `pg_advisory_xact_lock(hashtextextended('active-turns:' || ${userIdParam}, 0))`;
}

/** SQL: whether the session (the parameter holding its id) has no unfinished turn at all, so a new one would head its lane. */
export function laneIsFree(sessionIdParam: string): string {
  return `NOT EXISTS (SELECT 1 FROM turns WHERE session_id = ${sessionIdParam} AND ${NOT_FINISHED_SQL})`;
}

/**
 * Takes the user's slot lock when the session's lane is free (the caller holds the session row,
 * so the lane stays as found), for a statement behind it in the same transaction to count the
 * user's running turns with the lock held. Not awaited by the caller: on a pipelined client it
 * goes out with that statement, which PostgreSQL runs after it, on a snapshot taken then.
 */
export function lockSlotIfLaneFree(client: DbClient, sessionId: string, userId: string): Promise<unknown> {
  return client.query(`SELECT CASE WHEN ${laneIsFree('$1')} THEN ${slotLock('$2')} END`, [sessionId, userId]);
}

/** The user messages a starting turn puts into its session's conversation, one per message. */
export async function insertUserMessages(client: DbClient, sessionId: string, turn: QueuedTurn): Promise<void> {
  await client.query(
    `INSERT INTO messages (session_id, turn_id, role, content)
     SELECT $1, $2, 'user', text FROM unnest($3::text[]) WITH ORDINALITY AS m(text, n) ORDER BY n`,
    [sessionId, turn.id, turn.inputs],
  );
}

/**
 * The user's other sessions whose next turn waits for nothing but a free slot, oldest first:
 * when one of the user's turns ends or parks, these get their chance to start. A head that is
 * not due (a voice note's transcript, the message rate) is left out: it would take the place of
 * one that can start, and its own lane job comes back for it.
 */
export async function sessionsWaitingForSlot(db: Queryable, sessionId: string, limit: number): Promise<string[]> {
  const found = await db.query<{ id: string }>(
    `SELECT s.id FROM sessions s
     JOIN LATERAL (SELECT lane_seq, COALESCE(${DUE_AT_SQL} <= NOW(), true) AS due FROM turns q WHERE q.session_id = s.id AND q.status = 'queued'
                   ORDER BY lane_seq LIMIT 1) head ON true
     WHERE s.user_id = (SELECT user_id FROM sessions WHERE id = $1) AND s.id <> $1 AND head.due
       AND NOT EXISTS (SELECT 1 FROM turns a WHERE a.session_id = s.id AND a.status = ANY($2))
     ORDER BY head.lane_seq LIMIT $3`,
    [sessionId, ACTIVE_STATUSES, limit],
  );
  return found.rows.map((row) => row.id);
}

/**
 * How long until the head of an idle session's lane is due, when it waits for its start_after
 * (or its voice notes' hold).
 * Its wake job was timed by another clock (the gateway's); if it came early, the lane job asks
 * again rather than leave the turn queued with nothing coming back for it.
 */
export async function msUntilDue(db: Queryable, sessionId: string): Promise<number | undefined> {
  const found = await db.query<{ ms: number }>(
    `SELECT CEIL(EXTRACT(EPOCH FROM (${DUE_AT_SQL} - NOW())) * 1000)::int AS ms FROM turns q
     WHERE q.session_id = $1 AND q.status = 'queued' AND ${DUE_AT_SQL} > NOW()
       AND q.lane_seq = (SELECT MIN(lane_seq) FROM turns h WHERE h.session_id = $1 AND h.status = 'queued')
       AND NOT EXISTS (SELECT 1 FROM turns a WHERE a.session_id = $1 AND a.status = ANY($2))`,
    [sessionId, ACTIVE_STATUSES],
  );
  return found.rows[0]?.ms;
}
