import type { Job, JobType } from 'bullmq';
import { QUEUE_NAMES, type QueueName, type Queues } from '@assistant/shared';
import { concernsUser, type UserFootprint } from './user-footprint';

/** Job states that have not run yet: what is left of them must never run. */
// 'wait' also covers a paused queue's jobs.
const NOT_YET_RUN: JobType[] = ['wait', 'delayed', 'prioritized', 'waiting-children'];
/** Finished jobs kept for a while (DEFAULT_JOB_OPTIONS: failed ones for 7 days) hold what was sent to their chats. */
const FINISHED: JobType[] = ['completed', 'failed'];
const PAGE = 500;

/** A job by its queue and id. */
export interface JobRef {
  queue: string;
  id: string;
}

/** What removeUserJobs did: the jobs it removed, and those running, which it could not. */
export interface RemovedJobs {
  removed: Job[];
  running: JobRef[];
}

/**
 * Removes every queued and scheduled job about the user (turn steps, tool calls, deliveries,
 * reminders' firings, digests), and the finished ones kept for a while. Found first, then removed, so removals do not shift the pages
 * being read. A job already running finds the user's rows gone and does nothing, since each
 * processor re-reads its rows first; it is locked and cannot be removed, so it is answered as
 * running, for removeEndedJobs once it has ended.
 */
export async function removeUserJobs(queues: Queues, footprint: UserFootprint, except?: string): Promise<RemovedJobs> {
  const removed: Job[] = [];
  const running: JobRef[] = [];
  for (const name of QUEUE_NAMES) {
    const queue = queues[name];
    const doomed: Job[] = [];
    for (let start = 0; ; start += PAGE) {
      const page = (await queue.getJobs([...NOT_YET_RUN, ...FINISHED, 'active'], start, start + PAGE - 1, true)) as Job[];
      doomed.push(...page.filter((job) => job && job.id !== except && concernsUser(job.data, footprint)));
      if (page.length < PAGE) break;
    }
    for (const job of doomed) {
      await job.remove().then(
        () => removed.push(job),
        () => running.push({ queue: name, id: job.id as string }),
      );
    }
  }
  return { removed, running };
}

/** Removes those of `jobs` that have ended by now (or are gone); answers the ones still running. */
export async function removeEndedJobs(queues: Queues, jobs: JobRef[]): Promise<JobRef[]> {
  const running: JobRef[] = [];
  for (const ref of jobs) {
    const queue = queues[ref.queue as QueueName] as Queues[QueueName] | undefined;
    const job = queue && (await queue.getJob(ref.id));
    if (job) await job.remove().catch(() => running.push(ref));
  }
  return running;
}
