import { addOutboxJob, everyInterval, reminderFireJob, reminderFireJobId, type Runtime } from '@assistant/shared';

/** A reminder this late has lost its job: its own job fires it on time, or within a backlog's wait. */
const OVERDUE_SECONDS = 60;
const BATCH = 100;

/** Unfired reminders past their time (idx_reminders_unfired). */
const OVERDUE = `SELECT id, at FROM reminders
  WHERE at < NOW() - make_interval(secs => $1) AND (last_fired_at IS NULL OR last_fired_at < at)
  ORDER BY at LIMIT $2`;

type SweepDeps = Pick<Runtime, 'db' | 'queues' | 'logger'>;

/**
 * The safety net of reminders: their fire jobs wait in Redis, delayed, and nothing else holds
 * them. A Redis that lost its data (restarted without persistence, failed over) or a job out of
 * attempts would leave a reminder that never fires. Once a minute this gives every overdue
 * reminder its fire job again: added when missing, retried when it ended without firing. The
 * job's id names the reminder and its time, so a job still waiting is never doubled, and the
 * fire job's own checks keep a retried one from firing twice.
 */
export function startReminderSweeper(deps: SweepDeps, intervalMs = 60_000): () => void {
  return everyInterval(() => sweepOverdueReminders(deps), intervalMs);
}

export async function sweepOverdueReminders(deps: SweepDeps): Promise<void> {
  const { db, logger } = deps;
  try {
    const overdue = await db.query<{ id: string; at: Date }>(OVERDUE, [OVERDUE_SECONDS, BATCH]);
    // One reminder's trouble (another agent worker's sweep retried its job first) leaves the others to this sweep.
    const swept = await Promise.allSettled(overdue.rows.map(({ id, at }) => requeue(deps, id, at)));
    for (const outcome of swept) if (outcome.status === 'rejected') logger.warn({ err: outcome.reason }, 'reminder sweep failed');
  } catch (error) {
    logger.warn({ err: error }, 'reminder sweep failed');
  }
}

async function requeue({ queues, logger }: SweepDeps, id: string, at: Date): Promise<void> {
  const job = await queues.reminders.getJob(reminderFireJobId(id, at));
  const state = await job?.getState();
  if (!job) await addOutboxJob(queues, reminderFireJob(id, at));
  else if (state === 'completed' || state === 'failed') await job.retry(state, { resetAttemptsMade: true, resetAttemptsStarted: true });
  else return;
  logger.warn({ reminderId: id, due: at, job: state ?? 'missing' }, 'queued an overdue reminder again');
}
