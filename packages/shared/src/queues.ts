import { Queue, type ConnectionOptions, type DefaultJobOptions } from 'bullmq';
import type { Redis } from 'ioredis';

/** Queue names are data stored in Redis: renaming one needs a migration plan. */
export const QUEUE_NAMES = ['agent-turns', 'tool-calls', 'deliveries', 'reminders', 'session-digests'] as const;
export type QueueName = (typeof QUEUE_NAMES)[number];

/**
 * Finished jobs are kept for a while (never `removeOnComplete: true`: a waiter would fail with
 * "Missing key") and trimmed by age and count so Redis memory stays bounded.
 */
export const DEFAULT_JOB_OPTIONS: DefaultJobOptions = {
  attempts: 5,
  backoff: { type: 'exponential', delay: 500 },
  removeOnComplete: { age: 3_600, count: 5_000 },
  removeOnFail: { age: 7 * 86_400, count: 5_000 },
};

export type Queues = Record<QueueName, Queue> & { close(): Promise<void> };

export function createQueues(connection: Redis | ConnectionOptions, prefix: string): Queues {
  const entries = QUEUE_NAMES.map(
    (name) => [name, new Queue(name, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS })] as const,
  );
  const queues = Object.fromEntries(entries) as Record<QueueName, Queue>;
  return {
    ...queues,
    close: async () => {
      await Promise.all(entries.map(([, queue]) => queue.close()));
    },
  };
}

/** BullMQ refuses ':' and integer-only custom ids; ours are `<kind>.<uuid>`. */
export function jobId(kind: string, id: string): string {
  return `${kind}.${id}`;
}
