import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * The floor any queued request/response pays here: add a job, a worker answers, wait for its
 * completion; one at a time, like a turn alone.
 */
export async function bareRoundTrip(redisUrl: string, prefix: string, count: number): Promise<number[]> {
  const connections: Redis[] = [];
  const connect = () => {
    connections.push(new Redis(redisUrl, { maxRetriesPerRequest: null }));
    return connections.at(-1) as Redis;
  };
  const queue = new Queue('bench-echo', { connection: connect(), prefix });
  const events = new QueueEvents('bench-echo', { connection: connect(), prefix });
  const worker = new Worker('bench-echo', async (job) => job.data as unknown, { connection: connect(), prefix });
  await events.waitUntilReady();
  await worker.waitUntilReady();
  const samples: number[] = [];
  try {
    for (let n = 0; n < count; n++) {
      const started = performance.now();
      const job = await queue.add('echo', { n }, { removeOnComplete: { age: 60 } });
      await job.waitUntilFinished(events, 10_000);
      samples.push(performance.now() - started);
    }
  } finally {
    await worker.close();
    await events.close();
    await queue.obliterate({ force: true });
    await queue.close();
    for (const connection of connections) connection.disconnect();
  }
  return samples;
}
