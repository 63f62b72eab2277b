import { enqueueErasure, type JobHandler, type Runtime } from '@assistant/shared';
import { eraseUser, type ErasureDeps } from './erase-user';

/** An erasure asked for this long ago and still not done lost its job (a gateway died before queuing it). */
const STUCK_AFTER_SECONDS = 60;

/** `erase-user` jobs of the session-digests queue. */
export function createErasureHandler(deps: ErasureDeps): JobHandler<'session-digests', 'erase-user'> {
  return async ({ userId }, job) => {
    await eraseUser(deps, userId, job.id);
  };
}

/**
 * The safety net of erasures: the gateway marks the user, commits, then queues the job; if it
 * died in between, this queues it again (same job id, so never twice).
 */
export function startErasureSweeper(runtime: Pick<Runtime, 'db' | 'queues' | 'logger'>, intervalMs = 60_000): () => void {
  const sweep = async () => {
    try {
      const stuck = await runtime.db.query<{ id: string }>(
        `SELECT id FROM users WHERE erasing_at < NOW() - make_interval(secs => $1) LIMIT 100`,
        [STUCK_AFTER_SECONDS],
      );
      for (const { id } of stuck.rows) await enqueueErasure(runtime.queues, id);
    } catch (error) {
      runtime.logger.warn({ err: error }, 'erasure sweep failed');
    }
  };
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
