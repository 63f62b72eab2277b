import { randomUUID } from 'node:crypto';
import type { MediaRef } from '../channels/media-download';
import type { Config } from '../env';
import { committingLast, withTransaction, type DbClient } from '../db';
import { sessionIdleDigestJob } from '../digests/session-digest-jobs';
import type { ChannelAddress } from '../jobs';
import { jobId } from '../queues';
import { hasFreeSlot, headOfLane, insertUserMessages, laneIsFree, lockSlotIfLaneFree, runningTurns } from './lane-admission';
import type { VoiceHold } from './voice-holds';
import { appendOutbox, outboxEvent, outboxJob, type OutboxEntry } from './outbox';
import { bumpVersion, type TurnMachine } from './turn-machine';
import { ACTIVE_STATUSES } from './turn-status';

/** A user's message, as it starts a turn or joins a queued one (if_busy=merge). */
export interface TurnMessage {
  text: string;
  /** The chat it came from: the turn's answers go there. */
  origin?: ChannelAddress | undefined;
  /** A channel photo the model sees with the text (VISION). */
  attachment?: MediaRef | undefined;
  /** Over the user's message rate: the turn may not start for this long. */
  startAfterMs?: number | undefined;
  /** A chat voice note still being transcribed: `text` is its placeholder, and its turn is held (voice-holds.ts). */
  voice?: VoiceHold | undefined;
}

export interface NewTurn extends TurnMessage {
  userId: string;
  sessionId: string;
  sessionKey: string;
}

/** What starting a turn needs: the per-user limit and the idle digest's delay. */
export interface LaneSettings {
  maxActiveTurnsPerUser: number;
  sessionIdleSeconds: number;
}

export function laneSettings(config: Pick<Config, 'MAX_ACTIVE_TURNS_PER_USER' | 'SESSION_IDLE_SECONDS'>): LaneSettings {
  return { maxActiveTurnsPerUser: config.MAX_ACTIVE_TURNS_PER_USER, sessionIdleSeconds: config.SESSION_IDLE_SECONDS };
}

/**
 * A message becomes a turn, inside the caller's transaction (the session row locked). When its
 * session has no unfinished turn and its user a free slot, it starts right away, as activateNext
 * would start it; otherwise it is `queued`, with the job that starts it once it heads its
 * session's lane. Either way what it owes is in its outbox, written with the row; the caller
 * publishes those entries after the commit.
 */
export async function createTurn(
  client: DbClient,
  lane: LaneSettings,
  input: NewTurn,
  /** The turn's row is the transaction's last statement: it goes out with the COMMIT (commitWith). */
  last = false,
): Promise<{ id: string; owed: OutboxEntry[] }> {
  const id = randomUUID();
  const started = startEntries(input.sessionId, id, input.sessionKey, lane);
  const queued = [
    outboxJob('agent-turns', 'lane', { sessionId: input.sessionId }, { jobId: jobId('lane', id) }),
    ...(input.startAfterMs !== undefined ? [wakeJob(input.sessionId, id, input.startAfterMs)] : []),
    ...(input.voice ? [wakeJob(input.sessionId, id, input.voice.holdMs)] : []),
  ];
  // A turn may start when it has no start_after, holds no voice note, its lane is free and its user a free slot. The
  // user's slot lock is taken only when the lane is free, and before the statement that counts
  // the user's running turns, so the count sees every start committed before it: the lock's
  // statement goes out with the turn's, one round trip, and PostgreSQL runs them in order.
  const mayStart = input.startAfterMs === undefined && !input.voice;
  const locked = mayStart ? lockSlotIfLaneFree(client, input.sessionId, input.userId) : undefined;
  // A turn that starts takes the preferences in force now, as activateNext's start does, and
  // its user message goes into the conversation with it. `s` is decided once: inlined, the
  // count would run for each of the six columns that ask it.
  const insert = committingLast(client, last).query<{ status: string }>(
    `WITH s AS MATERIALIZED (SELECT $9::boolean AND ${laneIsFree('$3')} AND ${runningTurns('$2')} < $12 AS starts),
     turn AS (
       INSERT INTO turns (id, user_id, session_id, session_key, input, origin, attachment, start_after, voice_pending, voice_held_until,
         status, started_at, max_iterations, autonomous, model, outbox)
       SELECT $1, $2, $3, $4, $5, $6, $7, NOW() + make_interval(secs => $8::float8 / 1000),
         CASE WHEN $13::text IS NULL THEN '[]'::jsonb ELSE jsonb_build_array(jsonb_build_object('input', 0, 'message', $13::text)) END, NOW() + make_interval(secs => $14::float8 / 1000),
         CASE WHEN s.starts THEN 'running' ELSE 'queued' END, CASE WHEN s.starts THEN NOW() END,
         CASE WHEN s.starts THEN p.max_iterations END, CASE WHEN s.starts THEN p.autonomous_mode END,
         CASE WHEN s.starts THEN p.default_model END, CASE WHEN s.starts THEN $10::jsonb ELSE $11::jsonb END
       FROM s LEFT JOIN user_preferences p ON p.user_id = $2
       RETURNING id, status),
     message AS (INSERT INTO messages (session_id, turn_id, role, content) SELECT $3, id, 'user', $5 FROM turn WHERE status = 'running')
     SELECT status FROM turn`,
    [
      id,
      input.userId,
      input.sessionId,
      input.sessionKey,
      input.text,
      input.origin ? JSON.stringify(input.origin) : null,
      input.attachment ? JSON.stringify(input.attachment) : null,
      input.startAfterMs ?? null,
      mayStart,
      JSON.stringify(started),
      JSON.stringify(queued),
      lane.maxActiveTurnsPerUser,
      input.voice?.message ?? null,
      input.voice?.holdMs ?? null,
    ],
  );
  const [inserted] = await Promise.all([insert, locked]);
  return { id, owed: inserted.rows[0]?.status === 'running' ? started : queued };
}

/**
 * How much one queued turn takes in by merging (if_busy=merge): its messages, the first included,
 * and their characters. A message past either joins no turn: it queues a new one behind it, which
 * the next messages join. So a flood (a chat over its message rate) costs a bounded row write per
 * message, not the whole list so far, and no turn sends the model more than this in one request.
 */
export const MERGE_MAX_MESSAGES = 50;
export const MERGE_MAX_CHARS = 64_000;

/**
 * Adds the message to the session's newest queued turn from the same place (the same chat, or
 * the API), if there is one and it has not started yet (not a resumed turn waiting for a slot,
 * which read its messages when it started): its answer goes where the turn's first message came from. A message
 * over the user's rate pushes the turn's start back until the limit allows, and a delayed lane
 * job comes back for it then. A photo joins with its message's place in the turn (the SET reads
 * merged_inputs before the append), so the model sees it with that message. A voice note still
 * being transcribed joins the same way, its placeholder holding its place, and holds the turn.
 * A turn that already holds MERGE_MAX_MESSAGES or MERGE_MAX_CHARS takes no more: the message queues its own.
 */
export async function mergeIntoQueued(client: DbClient, sessionId: string, message: TurnMessage): Promise<string | undefined> {
  const merged = await client.query<{ id: string }>(
    `UPDATE turns SET merged_inputs = array_append(merged_inputs, $2),
       merged_attachments = CASE WHEN $5::jsonb IS NULL THEN merged_attachments
         ELSE merged_attachments || jsonb_build_array(jsonb_build_object('input', 1 + cardinality(merged_inputs), 'ref', $5::jsonb)) END,
       start_after = GREATEST(start_after, NOW() + make_interval(secs => $3::float8 / 1000)),
       voice_pending = CASE WHEN $6::text IS NULL THEN voice_pending
         ELSE voice_pending || jsonb_build_array(jsonb_build_object('input', 1 + cardinality(merged_inputs), 'message', $6::text)) END,
       voice_held_until = GREATEST(voice_held_until, NOW() + make_interval(secs => $7::float8 / 1000))
     WHERE id = (SELECT id FROM turns WHERE session_id = $1 AND status = 'queued' ORDER BY lane_seq DESC LIMIT 1)
       AND status = 'queued' AND started_at IS NULL AND origin IS NOT DISTINCT FROM $4::jsonb
       AND cardinality(merged_inputs) + 2 <= $8 AND char_length(input) + char_length(array_to_string(merged_inputs, '')) + char_length($2) <= $9
     RETURNING id`,
    [
      sessionId,
      message.text,
      message.startAfterMs ?? null,
      message.origin ? JSON.stringify(message.origin) : null,
      message.attachment ? JSON.stringify(message.attachment) : null,
      message.voice?.message ?? null,
      message.voice?.holdMs ?? null,
      MERGE_MAX_MESSAGES,
      MERGE_MAX_CHARS,
    ],
  );
  const turnId = merged.rows[0]?.id;
  const wakes = [message.startAfterMs, message.voice?.holdMs].flatMap((delayMs) => (delayMs === undefined ? [] : [delayMs]));
  if (turnId && wakes.length > 0) {
    await appendOutbox(
      client,
      turnId,
      wakes.map((delayMs) => wakeJob(sessionId, turnId, delayMs)),
    );
  }
  return turnId;
}

/**
 * The lane job that starts a rate-delayed turn once its user's message window allows. Rounded up
 * to the second, so a flood of messages merged into one turn makes one job per second, not one each.
 */
export function wakeJob(sessionId: string, turnId: string, delayMs: number): OutboxEntry {
  const second = Math.ceil((Date.now() + delayMs) / 1000);
  return outboxJob(
    'agent-turns',
    'lane',
    { sessionId },
    { jobId: jobId('wake', `${turnId}.${second}`), delayMs: second * 1000 - Date.now() },
  );
}

/**
 * Starts the session's oldest queued turn (a `lane` job), unless one of its turns is already
 * active, it is not due yet, or its user has no free slot (MAX_ACTIVE_TURNS_PER_USER). A resumed
 * turn (resuming.ts) takes up where it was parked: it only runs again and takes its next step.
 */
export async function activateNext(m: TurnMachine, sessionId: string): Promise<string | undefined> {
  const started = await withTransaction(m.db, async (client) => {
    // Serialises lane changes of one session across every worker copy.
    await client.query('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [sessionId]);
    const active = await client.query('SELECT 1 FROM turns WHERE session_id = $1 AND status = ANY($2) LIMIT 1', [
      sessionId,
      ACTIVE_STATUSES,
    ]);
    if (active.rowCount !== 0) return undefined;
    const turn = await headOfLane(client, sessionId);
    if (!turn?.due || !(await hasFreeSlot(client, turn.user_id, m.maxActiveTurnsPerUser))) return undefined;
    if (turn.resumed) {
      const entries = [outboxJob('agent-turns', 'advance', { turnId: turn.id })];
      await bumpVersion(client, turn.id, entries, 'running');
      return { turn, entries };
    }
    const entries = startEntries(sessionId, turn.id, turn.session_key, m);
    // The preferences in force when the turn starts apply to the whole turn.
    await client.query(
      `UPDATE turns t SET status = 'running', started_at = NOW(), version = version + 1, outbox = t.outbox || $2::jsonb,
         max_iterations = p.max_iterations, autonomous = p.autonomous_mode, model = p.default_model
       FROM user_preferences p WHERE t.id = $1 AND p.user_id = t.user_id`,
      [turn.id, JSON.stringify(entries)],
    );
    await insertUserMessages(client, sessionId, turn);
    await client.query('UPDATE sessions SET last_activity_at = NOW() WHERE id = $1', [sessionId]);
    return { turn, entries };
  });
  if (!started) return undefined;
  await m.outbox.publish(started.turn.id, started.turn.origin, started.entries);
  return started.turn.id;
}

/** What a turn owes when it starts: its first event, its first step, and its session's idle digest re-armed. */
function startEntries(sessionId: string, turnId: string, sessionKey: string, lane: LaneSettings): OutboxEntry[] {
  return [
    outboxEvent({ type: 'turn_started', session_key: sessionKey }),
    outboxJob('agent-turns', 'advance', { turnId }),
    sessionIdleDigestJob(sessionId, turnId, lane.sessionIdleSeconds),
  ];
}
