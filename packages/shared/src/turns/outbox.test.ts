import { publishing } from '../../../../tests/helpers/publishing';
import { appendOutbox, outboxEvent, type OutboxEntry } from './outbox';

/** Channel copies of a turn's events: queued by the publisher, once, only for channel turns. */
const { db, queues, outbox: publisher, close } = publishing('outbox');
afterAll(close);

async function turnWith(origin: object | null): Promise<string> {
  const user = await db.query<{ id: string }>(`INSERT INTO users (display_name) VALUES ('outbox') RETURNING id`);
  const userId = user.rows[0]?.id;
  const session = await db.query<{ id: string }>(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main') RETURNING id`,
    [userId],
  );
  const turn = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, origin) VALUES ($1, $2, 'agent:main:main', 'hi', $3) RETURNING id`,
    [userId, session.rows[0]?.id, origin === null ? null : JSON.stringify(origin)],
  );
  return turn.rows[0]?.id as string;
}

const deliveriesOf = async (turnId: string) =>
  (await queues.deliveries.getJobs(['waiting', 'delayed', 'active', 'completed', 'failed'])).filter((job) => job.data.turnId === turnId);

describe('OutboxPublisher channel deliveries', () => {
  it('queues one turn-event job per delivered event of a channel turn, even when published twice', async () => {
    const turnId = await turnWith({ channel: 'telegram', chat_id: '42' });
    const entries: OutboxEntry[] = [
      outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' }),
      outboxEvent({ type: 'token', delta: 'Hel' }),
      outboxEvent({ type: 'message', role: 'assistant', content: 'Hello' }),
      outboxEvent({ type: 'done', status: 'completed' }),
    ];
    await appendOutbox(db, turnId, entries);
    await publisher.flush(turnId);
    // A process that died before removing the entries leaves them for the next one to publish again.
    await appendOutbox(db, turnId, entries);
    await publisher.flush(turnId);

    const jobs = await deliveriesOf(turnId);
    expect(jobs).toHaveLength(1);
    expect(jobs[0]?.id).toBe(`deliver.${entries[2]?.key}`);
    expect(jobs[0]?.name).toBe('turn-event');
    expect(jobs[0]?.data).toEqual({
      turnId,
      to: { channel: 'telegram', chat_id: '42' },
      event: { type: 'message', role: 'assistant', content: 'Hello' },
    });
  });

  it('queues nothing for a turn from the HTTP API', async () => {
    const turnId = await turnWith(null);
    await appendOutbox(db, turnId, [outboxEvent({ type: 'message', role: 'assistant', content: 'Hello' })]);
    await publisher.flush(turnId);
    expect(await deliveriesOf(turnId)).toHaveLength(0);
  });
});
