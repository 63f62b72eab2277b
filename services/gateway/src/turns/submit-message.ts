import { appendOutbox, jobId, outboxJob, withTransaction, type ChannelAddress, type DbClient, type Runtime } from '@assistant/shared';

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
}

/**
 * Queues a turn inside the caller's transaction: the session (created on first use), the turn
 * in `queued` and the job that starts it once it heads its session's lane. The caller flushes
 * the turn's outbox after committing.
 */
export async function insertTurn(client: DbClient, input: TurnInput): Promise<string> {
  const session = await client.query<{ id: string }>(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, $2)
     ON CONFLICT (user_id, session_key) WHERE archived_at IS NULL DO UPDATE SET last_activity_at = NOW()
     RETURNING id`,
    [input.userId, input.sessionKey],
  );
  const sessionId = (session.rows[0] as { id: string }).id;
  const turn = await client.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, origin) VALUES ($1, $2, $3, $4, $5) RETURNING id`,
    [input.userId, sessionId, input.sessionKey, input.text, input.origin ? JSON.stringify(input.origin) : null],
  );
  const id = (turn.rows[0] as { id: string }).id;
  await appendOutbox(client, id, [outboxJob('agent-turns', 'lane', { sessionId }, { jobId: jobId('lane', id) })]);
  return id;
}

/**
 * Accepts a user's message durably, then publishes the outbox. The turn's first event is
 * written only when it starts, so a client that connects to events_url right away misses nothing.
 */
export async function submitMessage(runtime: Runtime, input: TurnInput): Promise<SubmittedMessage> {
  const turnId = await withTransaction(runtime.db, (client) => insertTurn(client, input));
  await runtime.outbox.flush(turnId);
  return { turn_id: turnId, session_key: input.sessionKey, events_url: `/v1/turns/${turnId}/events` };
}
