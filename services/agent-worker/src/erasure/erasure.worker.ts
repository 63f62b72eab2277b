import { enqueueErasure, everyInterval, removeWhenDone, runAgainIn, type JobHandler, type Runtime } from '@assistant/shared';
import { pruneChannelMessages, pruneDeliveries } from './retention';
import { eraseUser, type ErasureDeps } from './erase-user';
import { removeEndedJobs } from './remove-user-jobs';

/** An erasure asked for this long ago and still not done lost its job (a gateway died before queuing it). */
const STUCK_AFTER_SECONDS = 60;

/** How often the erasure looks again for jobs of the user that were running, and for how long at most. */
const RUNNING_RECHECK_MS = 5_000;
const RUNNING_AT_MOST_MS = 3_600_000;

/**
 * `erase-user` jobs of the session-digests queue. Jobs about the user that were running as it
 * erased them end later, and would be kept as finished jobs naming the user's things: the job
 * comes back for them until they have ended (bounded: a running job ends within its timeout, or
 * stalls and runs again, finding nothing).
 */
export function createErasureHandler(deps: ErasureDeps): JobHandler<'session-digests', 'erase-user'> {
  return async ({ userId, running }, job, token) => {
    const waiting = await removeEndedJobs(deps.queues, running ?? (await eraseUser(deps, userId, job.id)));
    // Done, this job goes too: kept, it would name the user for another hour, and nothing can ask for the erasure again.
    if (waiting.length === 0) return removeWhenDone(job);
    if (Date.now() - job.timestamp > RUNNING_AT_MOST_MS) {
      deps.logger.warn({ userId, running: waiting.length }, 'jobs of an erased user still running: left to expire with their queue');
      return;
    }
    await job.updateData({ userId, running: waiting });
    await runAgainIn(job, token, RUNNING_RECHECK_MS);
  };
}

/**
 * The safety net of erasures: the gateway marks the user, commits, then queues the job; if it
 * died in between, this queues it again (same job id, so never twice). It also deletes the
 * records of channel messages received and of message parts sent past their retention, which no
 * erasure would otherwise reach.
 */
export function startErasureSweeper(runtime: Pick<Runtime, 'db' | 'queues' | 'logger'>, intervalMs = 60_000): () => void {
  const sweep = async () => {
    try {
      const stuck = await runtime.db.query<{ id: string }>(
        `SELECT id FROM users WHERE erasing_at < NOW() - make_interval(secs => $1) LIMIT 100`,
        [STUCK_AFTER_SECONDS],
      );
      for (const { id } of stuck.rows) await enqueueErasure(runtime.queues, id);
      await pruneChannelMessages(runtime.db);
      await pruneDeliveries(runtime.db);
    } catch (error) {
      runtime.logger.warn({ err: error }, 'erasure sweep failed');
    }
  };
  return everyInterval(sweep, intervalMs);
}
