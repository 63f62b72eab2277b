import type { DbClient, Queryable } from '../db';
import { jobId } from '../queues';
import { cancelTurnIn } from './continue-and-cancel';
import { appendOutbox, outboxJob } from './outbox';

/**
 * A chat voice note keeps its place in its session while it is transcribed (docs/channels.md#message-content):
 * its message joins a turn at once (a new one, or the session's queued turn, as any merged
 * message does), a placeholder at its input position, and that turn is not due until every voice
 * note in it has its transcript or was given up on (turns.voice_pending). A text that arrives
 * meanwhile merges behind the placeholder, so the model reads the transcript first; the hold
 * lasts `holdMs` at most, longer than every attempt of the transcription job, so a job lost for
 * good does not block the session: the turn then runs with the placeholder.
 */
export interface VoiceHold {
  /** The voice note's channel_messages row. */
  message: string;
  holdMs: number;
}

/** The user's message in a turn until its transcript arrives, and for good if the hold expires first. */
export const VOICE_PLACEHOLDER = '[voice note]';

/**
 * What became of a voice note's place: `heard`/`dropped` in a turn still queued (it starts once no
 * voice note holds it); `ended`: it was the turn's only message and could not be heard, so the
 * turn ended without a model call; `late`: its turn started without it (the hold expired), or an
 * interrupting message cancelled it and took its messages, so the caller queues the transcript as
 * a message of its own; `withdrawn`: its turn was cancelled before starting; `settled`: an
 * earlier run decided already.
 */
export type VoiceOutcome = 'heard' | 'dropped' | 'ended' | 'late' | 'withdrawn' | 'settled';

interface HeldTurn {
  id: string;
  session_id: string;
  status: string;
  started: boolean;
  input: string;
  merged_inputs: string[];
  merged_attachments: { input: number; ref: unknown }[];
  voice_pending: { input: number; message: string }[];
}

/** Whether the voice note still holds a place in the turn: false once an earlier run settled it (nothing to download again). */
export async function voiceIsPending(db: Queryable, turnId: string, message: string): Promise<boolean> {
  const found = await db.query(
    `SELECT 1 FROM turns WHERE id = $1 AND voice_pending @> jsonb_build_array(jsonb_build_object('message', $2::text))`,
    [turnId, message],
  );
  return found.rowCount !== 0;
}

/**
 * Settles a voice note's place in its turn, inside the caller's transaction: `transcript` fills
 * it in, `undefined` (nothing could be heard) removes it. The session row is locked first, as
 * every lane change and merge does, so no turn starts or takes a message halfway through.
 */
export async function settleVoice(
  client: DbClient,
  turnId: string,
  message: string,
  transcript: string | undefined,
): Promise<VoiceOutcome> {
  const session = await client.query<{ session_id: string }>('SELECT session_id FROM turns WHERE id = $1', [turnId]);
  const sessionId = session.rows[0]?.session_id;
  if (!sessionId) return 'settled';
  await client.query('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [sessionId]);
  const found = await client.query<HeldTurn>(
    `SELECT id, session_id, status, started_at IS NOT NULL AS started, input, merged_inputs, merged_attachments, voice_pending
     FROM turns WHERE id = $1 FOR UPDATE`,
    [turnId],
  );
  const turn = found.rows[0];
  const place = turn?.voice_pending.find((entry) => entry.message === message);
  if (!turn || !place) return 'settled';
  const pending = turn.voice_pending.filter((entry) => entry !== place);
  const inputs = [turn.input, ...turn.merged_inputs];
  if (turn.status !== 'queued' || turn.started) {
    await client.query('UPDATE turns SET voice_pending = $2 WHERE id = $1', [turn.id, JSON.stringify(pending)]);
    if (turn.started) return 'late';
    // An interruption that cancelled it gave its messages to the interrupting turn: the transcript follows them.
    const kept = await client.query('SELECT 1 FROM messages WHERE turn_id = $1 LIMIT 1', [turn.id]);
    return kept.rowCount !== 0 ? 'late' : 'withdrawn';
  }
  if (transcript === undefined && inputs.length === 1) {
    await client.query('UPDATE turns SET voice_pending = $2 WHERE id = $1', [turn.id, JSON.stringify(pending)]);
    // Nothing else to answer: ends `cancelled` (nothing goes to the chat but the apology) and frees the lane.
    await cancelTurnIn(client, turn.id);
    return 'ended';
  }
  let attachments = turn.merged_attachments;
  if (transcript === undefined) {
    // The messages after it move up one place, and so do the photos and voice notes that belong to them.
    const after = (index: number) => (index > place.input ? index - 1 : index);
    inputs.splice(place.input, 1);
    attachments = attachments.map((photo) => ({ ...photo, input: after(photo.input) }));
    pending.forEach((entry) => (entry.input = after(entry.input)));
  } else {
    inputs[place.input] = transcript;
  }
  await client.query(`UPDATE turns SET input = $2, merged_inputs = $3, merged_attachments = $4, voice_pending = $5 WHERE id = $1`, [
    turn.id,
    inputs[0],
    inputs.slice(1),
    JSON.stringify(attachments),
    JSON.stringify(pending),
  ]);
  // The turn may be due now: the lane job starts it if it heads its lane (or finds it still waiting).
  if (pending.length === 0) {
    await appendOutbox(client, turn.id, [outboxJob('agent-turns', 'lane', { sessionId }, { jobId: jobId('heard', message) })]);
  }
  return transcript === undefined ? 'dropped' : 'heard';
}
