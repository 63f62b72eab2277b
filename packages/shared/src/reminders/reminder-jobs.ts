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

/**
 * The id of the delivery of a firing to the user's last-used channel. It names the firing by its
 * `last_fired_at`, not by the time it was due, so it is the same whichever of the reminder's jobs
 * queues it again: the retry of the job that fired, an old job that a move left beside the new one
 * (a zone change just as the old time came) and that runs after the new one fired, or the
 * lost-Redis sweep.
 */
export function reminderNoticeJobId(reminderId: string, firedAt: Date): string {
  return jobId('notify', `${reminderId}.${firedAt.getTime()}`);
}

/** The delivery of a reminder's firing at `firedAt` (its `last_fired_at`) to its user's last-used channel. */
export function reminderNoticeJob(reminder: { id: string; user_id: string; text: string }, firedAt: Date): OutboxJob {
  return outboxJob(
    'deliveries',
    'notify',
    { userId: reminder.user_id, text: reminder.text },
    { jobId: reminderNoticeJobId(reminder.id, firedAt) },
  );
}

export function reminderCancelJob(reminderId: string, at: Date): OutboxJob {
  return outboxJob('reminders', 'cancel', { reminderId, at: at.toISOString() });
}
