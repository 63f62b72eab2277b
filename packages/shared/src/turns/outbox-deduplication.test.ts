import { Worker, type Job } from 'bullmq';
import { insertTestUser } from '../../../../tests/helpers/db';
import { publishing } from '../../../../tests/helpers/publishing';
import { sessionIdleDigestJob } from '../digests/session-digest-jobs';
import { createWorkerRedis } from '../redis';
import { appendOutbox } from './outbox';

/**
 * The session digest is armed by a message through a deduplicated outbox job (BullMQ
 * deduplication, keep-last-if-active): these tests pin down that BullMQ 6 really behaves that way.
 */
const { db, queues, prefix, outbox: publisher, close } = publishing('dedup');
afterAll(close);

/** A message of the session: a turn whose outbox re-arms the digest, published. */
async function message(session: { userId: string; sessionId: string }, idleSeconds: number): Promise<string> {
  const turn = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input) VALUES ($1, $2, 'agent:main:main', 'hi') RETURNING id`,
    [session.userId, session.sessionId],
  );
  const turnId = turn.rows[0]?.id as string;
  await appendOutbox(db, turnId, [sessionIdleDigestJob(session.sessionId, turnId, idleSeconds)]);
  await publisher.flush(turnId);
  return turnId;
}

const digestsOf = async (sessionId: string, states: ('delayed' | 'waiting' | 'active' | 'completed')[]) =>
  (await queues['session-digests'].getJobs(states)).filter((job) => job.data.sessionId === sessionId);

describe('deduplicated outbox jobs (the session digest)', () => {
  it('keeps one delayed digest per session: later messages leave the one waiting in place', async () => {
    const session = await insertTestUser(db, 'dedup');
    const other = await insertTestUser(db, 'dedup');
    const first = await message(session, 60);
    await message(session, 60);
    await message(session, 60);
    await message(other, 60);

    // When it falls due in a session still in use, the digest moves itself to when the session
    // could be idle (digest.worker.ts), so the later messages need not move it.
    const delayed = await digestsOf(session.sessionId, ['delayed', 'waiting']);
    expect(delayed.map((job) => job.id)).toEqual([`digest-idle.${first}`]);
    expect(delayed[0]?.data).toEqual({ sessionId: session.sessionId, reason: 'idle' });
    expect(delayed[0]?.opts.delay).toBe(60_000);
    expect(await digestsOf(other.sessionId, ['delayed'])).toHaveLength(1);
  });

  it('does not lose a re-arm that comes while the digest runs: it runs again afterwards', async () => {
    const session = await insertTestUser(db, 'dedup');
    const seen: string[] = [];
    let rearmed = false;
    let queuedWhileRunning = -1;
    let finished: () => void = () => undefined;
    const bothDone = new Promise<void>((resolve) => (finished = resolve));
    const connection = createWorkerRedis(process.env.REDIS_URL as string);
    const worker = new Worker(
      'session-digests',
      async (job: Job) => {
        if (job.data.sessionId !== session.sessionId) return;
        seen.push(job.id as string);
        if (!rearmed) {
          rearmed = true;
          await message(session, 0);
          queuedWhileRunning = (await digestsOf(session.sessionId, ['delayed', 'waiting'])).length;
        }
        if (seen.length === 2) finished();
      },
      { connection, prefix },
    );
    try {
      const first = await message(session, 0);
      await bothDone;
      expect(seen[0]).toBe(`digest-idle.${first}`);
      expect(seen[1]).toMatch(/^digest-idle\./);
      expect(seen[1]).not.toBe(seen[0]);
      // While the first ran, the second waited outside the queue (it was not run in parallel).
      expect(queuedWhileRunning).toBe(0);
    } finally {
      await worker.close();
      await connection.quit();
    }
  });
});
