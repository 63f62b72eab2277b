import { jobId } from '../queues';
import { outboxJob, type OutboxJob } from '../turns/outbox';

/**
 * The id of the job that fires a reminder at `at`: naming the time means a retry or a republished
 * outbox cannot schedule one firing twice, while a moved reminder gets a job of its own.
 */
export function reminderFireJobId(reminderId: string, at: Date): string {
  return jobId('reminder', `${reminderId}.${at.getTime()}`);
}

/** The delayed job that fires a reminder at `at`, for an outbox or to queue directly. */
export function reminderFireJob(reminderId: string, at: Date, now = Date.now()): OutboxJob {
  return outboxJob(
    'reminders',
    'fire',
    { reminderId, at: at.toISOString() },
    {
      jobId: reminderFireJobId(reminderId, at),
      delayMs: Math.max(0, at.getTime() - now),
    },
  );
}

export function reminderCancelJob(reminderId: string, at: Date): OutboxJob {
  return outboxJob('reminders', 'cancel', { reminderId, at: at.toISOString() });
}
