import type { Job, Processor } from 'bullmq';
import { isConnectionError } from '../db';
import { runAgainIn } from '../job-processor';

/** Longest pause between two tries of a job that could not reach the database. */
const MAX_PAUSE_MS = 10_000;
/** Runs of one job before a connection problem counts against its attempts after all (about 8 minutes). */
const MAX_RUNS = 50;

/**
 * A job that could not reach the database (too many clients, a restart, a pool wait that ran
 * out) is not at fault: it is delayed with backoff without using up one of its attempts, so a
 * database under pressure makes work wait instead of failing turns. Other errors go to the
 * job's own retry policy as before.
 */
export function waitOutConnectionErrors(processor: Processor): Processor {
  return async (job: Job, token?: string) => {
    try {
      return (await processor(job, token)) as unknown;
    } catch (error) {
      if (!token || !isConnectionError(error) || job.attemptsStarted >= MAX_RUNS) throw error;
      const pauses = Math.max(0, job.attemptsStarted - job.attemptsMade - 1);
      return runAgainIn(job, token, Math.min(MAX_PAUSE_MS, 250 * 2 ** Math.min(pauses, 6)));
    }
  };
}
