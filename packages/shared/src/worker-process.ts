import { Worker } from 'bullmq';
import { waitOutConnectionErrors } from './capacity/connection-patience';
import type { JobProcessor } from './job-processor';
import { InvalidJobError, type QueueName } from './jobs';
import { closeRedis, createWorkerRedis, type Redis } from './redis';
import { createRuntime, handleShutdown, startHealthServer, type Runtime } from './runtime';

/**
 * Times a job may stall (its worker died or stopped renewing its lock) and run again; after one
 * more stall BullMQ fails it for good without running it, so a job that owes someone an answer
 * when it gives up (a voice note's apology) must give up on its run with this many stalls.
 */
export const MAX_STALLED_COUNT = 5;

/**
 * A BullMQ worker with the settings every process uses: a killed worker's jobs are taken over
 * after JOB_LOCK_MS; failures are logged (the job's own retry policy decides what happens next).
 */
export function startWorker(runtime: Runtime, processor: JobProcessor<QueueName>, connection: Redis): Worker {
  const { config, logger } = runtime;
  const { queue } = processor;
  const worker = new Worker(queue, waitOutConnectionErrors(processor), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDuration: config.JOB_LOCK_MS,
    stalledInterval: config.JOB_LOCK_MS,
    maxStalledCount: MAX_STALLED_COUNT,
  });
  worker.on('failed', (job, error) => {
    const details = { queue, job: job?.name, jobId: job?.id, err: error };
    // A job its queue's catalogue rejects is a producer's bug, not a passing failure.
    if (error instanceof InvalidJobError) logger.error(details, 'job rejected');
    else logger.warn(details, 'job failed');
  });
  worker.on('error', (error) => logger.warn({ queue, err: error }, 'worker error'));
  return worker;
}

/**
 * Closes a worker once its jobs in progress finish. While its connection is down none can finish
 * (a job's outcome is written to Redis) and the close would wait for Redis, so it stops at once: a
 * job it held is taken over when its lock expires, as after a crash.
 */
export async function closeWorker(worker: Worker, connection: Redis): Promise<void> {
  await worker.close(connection.status !== 'ready');
}

/**
 * The body of a worker process: BullMQ workers for the given queues, a health port, and one
 * shutdown path that lets jobs in progress finish while waiting ones stay queued for others.
 */
export function runWorkerProcess(
  service: string,
  setup: (runtime: Runtime) => { [Q in QueueName]?: JobProcessor<Q> },
  details: Record<string, unknown> = {},
  /**
   * After the jobs in progress: closes or waits for what the process holds besides queues and
   * connections (the tool worker's MCP servers, the agent worker's parked model calls).
   */
  onStop: () => Promise<void> = async () => undefined,
): Runtime {
  const runtime = createRuntime(service);
  const { config, logger } = runtime;
  const connection = createWorkerRedis(config.REDIS_URL);
  connection.on('error', (error) => logger.warn({ err: error }, 'worker redis connection problem'));

  const workers = Object.values(setup(runtime))
    .filter((processor) => processor !== undefined)
    .map((processor) => startWorker(runtime, processor, connection));

  const health = startHealthServer(config.HEALTH_PORT, async () => {
    await runtime.checkReady();
    if (connection.status !== 'ready') throw new Error('not ready: queue connection is down');
  });
  logger.info({ ...details, queues: workers.map((worker) => worker.name), concurrency: config.WORKER_CONCURRENCY }, `${service} started`);

  handleShutdown(logger, config.SHUTDOWN_TIMEOUT_MS, async (step) => {
    health?.close();
    step('finishing jobs in progress');
    await Promise.all(workers.map((worker) => closeWorker(worker, connection)));
    step('stopping the service');
    await onStop().catch(() => undefined);
    step('closing connections');
    await closeRedis(connection);
    await runtime.close();
  });
  return runtime;
}
