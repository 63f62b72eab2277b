import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';

/**
 * The floor any queued request/response pays here: add a job, a worker answers, wait for its
 * completion; one at a time, like a turn alone. Kept open, so it can be sampled again later
 * under the same conditions as what it is compared with.
 */
export class BareRoundTrip {
  private constructor(
    private readonly queue: Queue,
    private readonly events: QueueEvents,
    private readonly worker: Worker,
    private readonly connections: Redis[],
  ) {}

  static async open(redisUrl: string, prefix: string): Promise<BareRoundTrip> {
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
    return new BareRoundTrip(queue, events, worker, connections);
  }

  /** `count` round trips, one after another, in ms each. */
  async sample(count: number): Promise<number[]> {
    const samples: number[] = [];
    for (let n = 0; n < count; n++) {
      const started = performance.now();
      const job = await this.queue.add('echo', { n }, { removeOnComplete: { age: 60 } });
      await job.waitUntilFinished(this.events, 10_000);
      samples.push(performance.now() - started);
    }
    return samples;
  }

  async close(): Promise<void> {
    await this.worker.close();
    await this.events.close();
    await this.queue.obliterate({ force: true });
    await this.queue.close();
    for (const connection of this.connections) connection.disconnect();
  }
}
