import { Worker, type Processor } from 'bullmq';
import { waitOutConnectionErrors } from './capacity/connection-patience';
import type { QueueName } from './jobs';
import { createWorkerRedis, type Redis } from './redis';
import { createRuntime, handleShutdown, startHealthServer, type Runtime } from './runtime';

/**
 * A BullMQ worker with the settings every process uses: a killed worker's jobs are taken over
 * after JOB_LOCK_MS; failures are logged (the job's own retry policy decides what happens next).
 */
export function startWorker(runtime: Runtime, queue: QueueName, processor: Processor, connection: Redis): Worker {
  const { config, logger } = runtime;
  const worker = new Worker(queue, waitOutConnectionErrors(processor), {
    connection,
    prefix: config.QUEUE_PREFIX,
    concurrency: config.WORKER_CONCURRENCY,
    lockDuration: config.JOB_LOCK_MS,
    stalledInterval: config.JOB_LOCK_MS,
    maxStalledCount: 5,
  });
  worker.on('failed', (job, error) => logger.warn({ queue, job: job?.name, jobId: job?.id, err: error }, 'job failed'));
  worker.on('error', (error) => logger.warn({ queue, err: error }, 'worker error'));
  return worker;
}

/**
 * The body of a worker process: BullMQ workers for the given queues, a health port, and one
 * shutdown path that lets jobs in progress finish while waiting ones stay queued for others.
 */
export function runWorkerProcess(
  service: string,
  setup: (runtime: Runtime) => Partial<Record<QueueName, Processor>>,
  details: Record<string, unknown> = {},
  /** Closes what the process holds besides queues and connections (the tool worker's MCP servers). */
  onStop: () => Promise<void> = async () => undefined,
): Runtime {
  const runtime = createRuntime(service);
  const { config, logger } = runtime;
  const connection = createWorkerRedis(config.REDIS_URL);
  connection.on('error', (error) => logger.warn({ err: error }, 'worker redis connection problem'));

  const workers = Object.entries(setup(runtime)).map(([queue, processor]) =>
    startWorker(runtime, queue as QueueName, processor, connection),
  );

  const health = startHealthServer(config.HEALTH_PORT, async () => {
    await runtime.checkReady();
    if (connection.status !== 'ready') throw new Error('not ready: queue connection is down');
  });
  logger.info({ ...details, queues: workers.map((worker) => worker.name), concurrency: config.WORKER_CONCURRENCY }, `${service} started`);

  handleShutdown(logger, config.SHUTDOWN_TIMEOUT_MS, async (step) => {
    health?.close();
    step('finishing jobs in progress');
    await Promise.all(workers.map((worker) => worker.close()));
    step('stopping the service');
    await onStop().catch(() => undefined);
    step('closing connections');
    await connection.quit().catch(() => undefined);
    await runtime.close();
  });
  return runtime;
}
