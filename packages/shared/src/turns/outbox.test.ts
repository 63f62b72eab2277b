import { randomUUID } from 'node:crypto';
import { publishing } from '../../../../tests/helpers/publishing';
import { appendOutbox, outboxEvent, outboxJob, type OutboxEntry } from './outbox';
import { loadTurnState } from './turn-state';

/** Channel copies of a turn's events: queued by the publisher, once, only for channel turns. */
const { db, queues, events, outbox: publisher, close } = publishing('outbox');
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

describe('OutboxPublisher removal', () => {
  const outboxOf = async (turnId: string) =>
    (await db.query<{ outbox: OutboxEntry[] }>('SELECT outbox FROM turns WHERE id = $1', [turnId])).rows[0]?.outbox.map(
      (entry) => entry.key,
    );

  it("hands a batch's removal to its one next-step job, added last with the batch's keys, and that job's load removes it", async () => {
    const turnId = await turnWith(null);
    const leftover = outboxEvent({ type: 'token', delta: 'left over' });
    await appendOutbox(db, turnId, [leftover]);
    const digest = outboxJob('session-digests', 'digest', { sessionId: randomUUID() }, { jobId: `digest.${randomUUID()}` });
    const advance = outboxJob('agent-turns', 'advance', { turnId });
    const batch = [outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' }), advance, digest];
    await appendOutbox(db, turnId, batch);

    expect(await publisher.publish(turnId, null, batch)).toEqual([]);
    const job = await queues['agent-turns'].getJob(advance.jobId);
    expect(job?.data).toEqual({ turnId, published: batch.map((entry) => entry.key) });
    // Added before the carrier, so it exists whenever the carrier does.
    expect(await queues['session-digests'].getJob(digest.jobId)).toBeDefined();
    expect(await outboxOf(turnId)).toEqual([leftover.key, ...batch.map((entry) => entry.key)]);

    const state = await loadTurnState(db, turnId, job?.data.published);
    expect(state?.outbox.map((entry) => entry.key)).toEqual([leftover.key]);
    expect(await outboxOf(turnId)).toEqual([leftover.key]);
    // Run again (parked, retried), the same load writes nothing.
    const version = async () => (await db.query<{ xmin: string }>('SELECT xmin FROM turns WHERE id = $1', [turnId])).rows[0]?.xmin;
    const before = await version();
    await loadTurnState(db, turnId, job?.data.published);
    expect(await version()).toBe(before);
  });

  it("adds a session's digest job with the batch's events, and the turn's next step only once they are written", async () => {
    const turnId = await turnWith(null);
    const digest = outboxJob('session-digests', 'digest', { sessionId: randomUUID() }, { jobId: `digest.${randomUUID()}` });
    const advance = outboxJob('agent-turns', 'advance', { turnId });
    const batch = [outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' }), advance, digest];
    await appendOutbox(db, turnId, batch);
    // The events' write is held: what goes out with it is there meanwhile, what waits for it is not.
    let release: () => void = () => undefined;
    const held = new Promise<void>((resolve) => (release = resolve));
    const emitMany = events.emitMany.bind(events);
    const emits = jest.spyOn(events, 'emitMany').mockImplementationOnce(async (...args) => {
      await held;
      return emitMany(...args);
    });
    const published = publisher.publish(turnId, null, batch);
    const digestJob = () => queues['session-digests'].getJob(digest.jobId);
    for (let i = 0; i < 100 && !(await digestJob()); i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await digestJob()).toBeDefined();
    expect(await queues['agent-turns'].getJob(advance.jobId)).toBeUndefined();
    release();
    await published;
    emits.mockRestore();
    expect(await queues['agent-turns'].getJob(advance.jobId)).toBeDefined();
  });

  it('removes a batch itself when no job can carry it: none, a delayed one, or two', async () => {
    const turnId = await turnWith(null);
    const batches = [
      [outboxEvent({ type: 'done', status: 'completed' })],
      [outboxJob('agent-turns', 'advance', { turnId }, { delayMs: 60_000 })],
      [outboxJob('agent-turns', 'advance', { turnId }), outboxJob('agent-turns', 'advance', { turnId })],
    ];
    for (const batch of batches) {
      await appendOutbox(db, turnId, batch);
      await publisher.publish(turnId, null, batch);
      expect(await outboxOf(turnId)).toEqual([]);
    }
    const jobs = await queues['agent-turns'].getJobs(['waiting', 'delayed']);
    expect(jobs.filter((job) => job.data.turnId === turnId).map((job) => job.data.published)).toEqual([undefined, undefined, undefined]);
  });

  it('removes the batches asked for in one tick with one statement, each only from its own turn', async () => {
    const [first, second] = await Promise.all([turnWith(null), turnWith(null)]);
    const kept = outboxEvent({ type: 'token', delta: 'not published yet' });
    const done = () => [outboxEvent({ type: 'done', status: 'completed' })];
    const batches = [
      { turnId: first, entries: done() },
      { turnId: second, entries: [outboxEvent({ type: 'token', delta: 'Hel' })] },
      { turnId: second, entries: done() },
    ];
    for (const { turnId, entries } of batches) await appendOutbox(db, turnId, entries);
    await appendOutbox(db, second, [kept]);

    const query = jest.spyOn(db, 'query');
    // Removed as publishing would after each batch, all in the same tick.
    await Promise.all(
      batches.map(({ turnId, entries }) =>
        publisher.remove(
          turnId,
          entries.map((entry) => entry.key),
        ),
      ),
    );
    const statements = query.mock.calls.filter(([text]) => String(text).includes('UPDATE turns SET outbox'));
    query.mockRestore();
    expect(statements).toHaveLength(1);
    expect(await outboxOf(first)).toEqual([]);
    expect(await outboxOf(second)).toEqual([kept.key]);
  });

  it("leaves a batch without jobs to the caller's next statement when asked, and answers its keys", async () => {
    const turnId = await turnWith(null);
    const batch = [outboxEvent({ type: 'tool_complete', task_id: 'task_1', tool_name: 'create_folder', result: '{}' })];
    await appendOutbox(db, turnId, batch);
    expect(await publisher.publish(turnId, null, batch, 'caller')).toEqual([batch[0]?.key]);
    expect(await outboxOf(turnId)).toEqual([batch[0]?.key]);
  });

  it('never hands leftovers to their job, which may have run already: republishing removes them', async () => {
    const turnId = await turnWith(null);
    const advance = outboxJob('agent-turns', 'advance', { turnId });
    await appendOutbox(db, turnId, [outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' }), advance]);
    await publisher.flush(turnId);
    expect(await outboxOf(turnId)).toEqual([]);
    expect((await queues['agent-turns'].getJob(advance.jobId))?.data).toEqual({ turnId });
  });
});
