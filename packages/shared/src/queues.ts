import { Queue, type ConnectionOptions, type DefaultJobOptions, type JobsOptions } from 'bullmq';
import type { Redis } from 'ioredis';
import { parseJob, QUEUE_NAMES, type JobData, type JobName, type QueueName } from './jobs';

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

/**
 * The five queues on one connection. Each passes on its connection's errors (Redis gone): without
 * a listener BullMQ prints every one to stderr as a raw stack trace, so `onError` takes them.
 */
export function createQueues(
  connection: Redis | ConnectionOptions,
  prefix: string,
  onError: (error: Error, queue: QueueName) => void,
): Queues {
  const entries = QUEUE_NAMES.map((name) => {
    const queue = new Queue(name, { connection, prefix, defaultJobOptions: DEFAULT_JOB_OPTIONS });
    queue.on('error', (error) => onError(error, name));
    return [name, queue] as const;
  });
  const queues = Object.fromEntries(entries) as Record<QueueName, Queue>;
  return {
    ...queues,
    close: async () => {
      await Promise.all(entries.map(([, queue]) => queue.close()));
    },
  };
}

/**
 * The way jobs enter a queue: the data is parsed against the catalogue first, so a payload its
 * worker would reject fails here, at the producer, instead of waiting in Redis.
 */
export async function addJob<Q extends QueueName, N extends JobName<Q>>(
  queues: Pick<Queues, Q>,
  queue: Q,
  name: N,
  data: JobData<Q, N>,
  options?: JobsOptions,
): Promise<void> {
  await addStoredJob(queues, queue, name, parseJob(queue, name, data), options);
}

/**
 * `addJob` for a name and data read back from storage: an outbox entry, parsed when
 * `outboxJob` built it (and parsed again by the worker that takes the job), so not here.
 */
export async function addStoredJob<Q extends QueueName>(
  queues: Pick<Queues, Q>,
  queue: Q,
  name: string,
  data: unknown,
  options?: JobsOptions,
): Promise<void> {
  await queues[queue].add(name, data, { ...LONGER_RETRIES[`${queue}:${name}`], ...options });
}

/** Sixteen attempts from 1 s, doubling: about 9 hours. */
const THROUGH_AN_OUTAGE: JobsOptions = { attempts: 16, backoff: { type: 'exponential', delay: 1_000 } };

/**
 * Jobs that retry for longer than the queue's default, by `<queue>:<name>`: those that wait for
 * a service outside the system, which may be down for longer than the default's few seconds.
 * A session's digest waits for the model: a session nobody writes to again (or one reset) would
 * never be digested. A chat message waits for Telegram or WhatsApp: an answer, a reply or a
 * reminder would be lost (a provider's refusal, a 4xx other than 429, is not retried at all).
 * A voice note's transcription keeps the default: its sender gets an apology when it runs out.
 */
const LONGER_RETRIES: Partial<Record<string, JobsOptions>> = {
  'session-digests:digest': THROUGH_AN_OUTAGE,
  'deliveries:turn-event': THROUGH_AN_OUTAGE,
  'deliveries:reply': THROUGH_AN_OUTAGE,
  'deliveries:notify': THROUGH_AN_OUTAGE,
  'deliveries:resend-notice': THROUGH_AN_OUTAGE,
};

/** BullMQ refuses ':' and integer-only custom ids; ours are `<kind>.<uuid>`. */
export function jobId(kind: string, id: string): string {
  return `${kind}.${id}`;
}
