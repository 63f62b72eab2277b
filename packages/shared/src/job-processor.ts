import { DelayedError, type Job } from 'bullmq';
import { jobCatalog, parseJob, type JobData, type JobName, type QueueName } from './jobs';

export type JobHandler<Q extends QueueName, N extends JobName<Q>> = (data: JobData<Q, N>, job: Job, token?: string) => Promise<void>;

/**
 * Ends this run of a job without finishing it: it waits `ms`, then runs again (its data and job id
 * kept). Throws DelayedError, which tells BullMQ the job was moved, not failed.
 */
export async function runAgainIn(job: Job, token: string | undefined, ms: number): Promise<never> {
  await job.moveToDelayed(Date.now() + ms, token);
  throw new DelayedError();
}

/**
 * Lets a running job that found its user erased leave no record behind: the erasure cannot remove
 * a job while it runs (it is locked), so the job drops itself as it completes. BullMQ reads
 * `opts.removeOnComplete` when the job completes, not when it was queued.
 */
export function removeWhenDone(job: Job): void {
  job.opts.removeOnComplete = true;
}

/** A handler for every job of a queue: a job without one, or a misspelt one, does not compile. */
export type JobHandlers<Q extends QueueName> = { [N in JobName<Q>]: JobHandler<Q, N> };

/** A BullMQ processor that knows its queue, so a worker cannot be started on another one. */
export type JobProcessor<Q extends QueueName> = ((job: Job, token?: string) => Promise<void>) & { readonly queue: Q };

/**
 * A queue's processor from its handler map: each job's data is parsed against its schema (an
 * unknown name or a bad payload fails for good with InvalidJobError) and handed over typed.
 * Processors are built as a worker process starts, so a map that is incomplete at run time
 * despite its type (a spread, a cast) stops the process there rather than failing jobs one by one.
 */
export function jobProcessor<Q extends QueueName>(queue: Q, handlers: JobHandlers<Q>): JobProcessor<Q> {
  checkHandlers(queue, handlers);
  const process = async (job: Job, token?: string): Promise<void> => {
    // Throws for a name outside the catalogue, so every name past this line has a handler.
    const data = parseJob(queue, job.name, job.data);
    // The name picks both the schema and the handler, which the compiler cannot pair up.
    const handle = handlers[job.name as JobName<Q>] as (data: unknown, job: Job, token?: string) => Promise<void>;
    await handle(data, job, token);
  };
  return Object.assign(process, { queue });
}

/** Exactly one handler per job of the queue: names the jobs without one and the handlers for no job. */
function checkHandlers(queue: QueueName, handlers: Record<string, unknown>): void {
  const jobs = Object.keys(jobCatalog[queue]);
  const missing = jobs.filter((name) => typeof handlers[name] !== 'function');
  const unknown = Object.keys(handlers).filter((name) => !jobs.includes(name));
  const problems = [
    ...(missing.length > 0 ? [`no handler for ${missing.join(', ')}`] : []),
    ...(unknown.length > 0 ? [`handlers for jobs not in the catalogue: ${unknown.join(', ')}`] : []),
  ];
  if (problems.length > 0) throw new Error(`queue ${queue}: ${problems.join('; ')}`);
}
