import { appendOutbox, jobId, outboxJob, withTransaction, type Runtime } from '@assistant/shared';

export interface SubmittedMessage {
  turn_id: string;
  session_key: string;
  events_url: string;
}

/**
 * Accepts a user's message durably: the session (created on first use), the turn in `queued`
 * and the job that starts it once it heads its session's lane all commit together; then the
 * outbox is published. The turn's first event is written only when it starts, so a client that
 * connects to events_url right away misses nothing.
 */
export async function submitMessage(
  runtime: Runtime,
  input: { userId: string; sessionKey: string; text: string },
): Promise<SubmittedMessage> {
  const turnId = await withTransaction(runtime.db, async (client) => {
    const session = await client.query<{ id: string }>(
      `INSERT INTO sessions (user_id, session_key) VALUES ($1, $2)
       ON CONFLICT (user_id, session_key) WHERE archived_at IS NULL DO UPDATE SET last_activity_at = NOW()
       RETURNING id`,
      [input.userId, input.sessionKey],
    );
    const sessionId = (session.rows[0] as { id: string }).id;
    const turn = await client.query<{ id: string }>(
      `INSERT INTO turns (user_id, session_id, session_key, input) VALUES ($1, $2, $3, $4) RETURNING id`,
      [input.userId, sessionId, input.sessionKey, input.text],
    );
    const id = (turn.rows[0] as { id: string }).id;
    await appendOutbox(client, id, [outboxJob('agent-turns', 'lane', { sessionId }, { jobId: jobId('lane', id) })]);
    return id;
  });
  await runtime.outbox.flush(turnId);
  return { turn_id: turnId, session_key: input.sessionKey, events_url: `/v1/turns/${turnId}/events` };
}
