import {
  createTurn,
  laneSettings,
  withTransaction,
  type ChannelAddress,
  type Config,
  type DbClient,
  type MediaRef,
  type OutboxEntry,
  type Runtime,
  type VoiceHold,
} from '@assistant/shared';
import { applyIfBusy, type IfBusy } from './busy-session';

export interface SubmittedMessage {
  turn_id: string;
  session_key: string;
  events_url: string;
}

export interface TurnInput {
  userId: string;
  sessionKey: string;
  text: string;
  /** The chat a channel message came from: the turn's answers are delivered there. */
  origin?: ChannelAddress;
  /** A channel photo the model sees with the text (VISION): a reference, fetched when the model request is built. */
  attachment?: MediaRef;
  /** What to do when the session is busy (docs/agent.md#busy-sessions); `queue` when unset. */
  ifBusy?: IfBusy;
  /** The message is over its user's rate: its turn may not start for this long (channels only). */
  startAfterMs?: number;
  /** A chat voice note still being transcribed: `text` is its placeholder, and its turn waits for the transcript. */
  voice?: VoiceHold;
}

export interface PlacedMessage {
  /** The turn that will answer: a new one, or the queued turn the message was merged into. */
  turnId: string;
  /** Every turn whose outbox the caller flushes after committing (the answering one first). */
  touched: string[];
  /** A new turn's outbox entries, which the caller may publish without reading them back. */
  owed?: OutboxEntry[];
}

/**
 * Queues a message inside the caller's transaction: the session (created on first use, its row
 * locked until the commit), then `if_busy`, then, unless the message joined a queued turn, the
 * turn: started at once when its lane is free, else `queued` (createTurn). The caller flushes
 * the touched turns' outboxes after committing.
 */
export async function insertTurn(
  client: DbClient,
  config: Config,
  input: TurnInput,
  /** Nothing follows in the caller's transaction: a new turn's row goes out with the COMMIT. */
  last = false,
): Promise<PlacedMessage> {
  const session = await client.query<{ id: string }>(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, $2)
     ON CONFLICT (user_id, session_key) WHERE archived_at IS NULL DO UPDATE SET last_activity_at = NOW()
     RETURNING id`,
    [input.userId, input.sessionKey],
  );
  const sessionId = (session.rows[0] as { id: string }).id;
  const busy = await applyIfBusy(client, sessionId, input.ifBusy ?? 'queue', input);
  if (busy.mergedInto) return { turnId: busy.mergedInto, touched: [busy.mergedInto] };
  const { id, owed } = await createTurn(
    client,
    laneSettings(config),
    {
      userId: input.userId,
      sessionId,
      sessionKey: input.sessionKey,
      text: input.text,
      origin: input.origin,
      attachment: input.attachment,
      startAfterMs: input.startAfterMs,
      voice: input.voice,
    },
    last,
  );
  return { turnId: id, touched: [id, ...busy.cancelled], owed };
}

/**
 * Accepts a user's message durably, then publishes the outbox. The turn's first event is
 * written only when it starts, so a client that connects to events_url right away misses nothing.
 */
export async function submitMessage(runtime: Runtime, input: TurnInput): Promise<SubmittedMessage> {
  const { turnId, touched, owed } = await withTransaction(runtime.db, (client) => insertTurn(client, runtime.config, input, true));
  // The cancelled turns' `done` and lane jobs first: the new turn starts when their lanes clear.
  for (const id of touched.slice(1)) await runtime.outbox.flush(id);
  if (owed) await runtime.outbox.publish(turnId, input.origin ?? null, owed);
  else await runtime.outbox.flush(turnId);
  return { turn_id: turnId, session_key: input.sessionKey, events_url: `/v1/turns/${turnId}/events` };
}
