import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { createWorkerRedis, type Redis } from '../redis';
import { waitOutConnectionErrors } from './connection-patience';

/** A job that cannot reach the database waits and tries again without using up its attempts. */
const prefix = `${process.env.QUEUE_PREFIX}-patience-${randomUUID().slice(0, 8)}`;
const connections: Redis[] = [];
const connect = () => {
  connections.push(createWorkerRedis(process.env.REDIS_URL as string));
  return connections.at(-1) as Redis;
};

afterAll(() => {
  for (const connection of connections) connection.disconnect();
});

it('delays a job on connection errors without counting them, and fails other errors as before', async () => {
  const queue = new Queue('patience', { connection: connect(), prefix });
  const events = new QueueEvents('patience', { connection: connect(), prefix });
  let runs = 0;
  const worker = new Worker(
    'patience',
    waitOutConnectionErrors(async (job) => {
      runs += 1;
      if (job.data.kind === 'flaky-db' && runs <= 2) throw Object.assign(new Error('sorry, too many clients already'), { code: '53300' });
      if (job.data.kind === 'broken') throw new Error('a real bug');
      return 'ok';
    }),
    { connection: connect(), prefix },
  );
  try {
    await events.waitUntilReady();
    const flaky = await queue.add('job', { kind: 'flaky-db' }, { attempts: 1 });
    await expect(flaky.waitUntilFinished(events, 20_000)).resolves.toBe('ok');
    expect(runs).toBe(3);

    const broken = await queue.add('job', { kind: 'broken' }, { attempts: 1 });
    await expect(broken.waitUntilFinished(events, 20_000)).rejects.toThrow('a real bug');
  } finally {
    await worker.close();
    await events.close();
    await queue.obliterate({ force: true });
    await queue.close();
  }
});
