import type { DbClient, Queryable } from '../db';
import type { Queues } from '../queues';
import { addOutboxJob, type OutboxJob } from '../turns/outbox';
import { reminderCancelJob, reminderFireJob } from './reminder-jobs';
import { instantOf, wallClockFromText, wallClockOf, wallClockText, type WallClock } from '../time/local-time';
import { nextOccurrence, type ReminderRepeat } from '../time/repeat-schedule';

/** The columns that place a reminder in time. `local_at` is read as text: a `timestamp` has no zone. */
export interface ReminderTiming {
  at: Date;
  repeat: ReminderRepeat | null;
  local_at: string | null;
}

export const REMINDER_TIMING_COLUMNS = 'at, repeat, local_at::text AS local_at';

/**
 * The user's zone; UTC for a user without preferences (rows made by hand in tests). `lock` (inside
 * a transaction that writes reminders) holds a change of the zone back until it commits, so that
 * change then moves the reminders written here too.
 */
export async function userTimeZone(db: Queryable, userId: string, lock = false): Promise<string> {
  const found = await db.query<{ timezone: string }>(
    `SELECT timezone FROM user_preferences WHERE user_id = $1${lock ? ' FOR SHARE' : ''}`,
    [userId],
  );
  return found.rows[0]?.timezone ?? 'UTC';
}

/** The wall-clock time a reminder was set for: `local_at`, or (older rows) `at` read in the zone. */
export function reminderWallClock(reminder: ReminderTiming, zone: string): WallClock {
  return reminder.local_at ? wallClockFromText(reminder.local_at) : wallClockOf(reminder.at, zone);
}

/**
 * When a reminder set for `wall` (the instant `instant`) first fires: a one-off at that instant;
 * a repeating one at its first occurrence from then on (a `weekdays` one set for a Saturday
 * starts on Monday), and never before `notBefore`.
 */
export function firstFiring(repeat: ReminderRepeat | null, wall: WallClock, instant: Date, zone: string, notBefore: Date): Date {
  if (!repeat) return instant;
  return nextOccurrence({ repeat, anchor: wall, zone }, new Date(Math.max(instant.getTime(), notBefore.getTime()) - 1));
}

/**
 * A change of the user's zone keeps their reminders' wall-clock times (a 09:00 reminder stays
 * 09:00 in the new zone): each one still to fire moves to the same local date and time of day in
 * `to`. A repeating one whose new time has already passed moves to its next occurrence; a one-off
 * one then fires at once (it had not fired yet).
 *
 * Run it in the transaction that changes the zone: it queues the moved reminders' jobs before
 * that transaction commits. No turn's outbox is there to hold them, and queued after the commit,
 * a process dying in between would leave a reminder without the job of its new time (or without
 * any, its old one cancelled). Queued first, they are harmless when the change rolls back: every
 * reminders job acts only on what it reads under the reminder's row lock, which this transaction
 * holds until it ends, so they find the reminder where it was (docs/architecture.md#time-zones).
 */
export async function moveRemindersToZone(
  client: DbClient,
  queues: Queues,
  userId: string,
  from: string,
  to: string,
  now = new Date(),
): Promise<void> {
  const found = await client.query<ReminderTiming & { id: string }>(
    `SELECT id, ${REMINDER_TIMING_COLUMNS} FROM reminders
     WHERE user_id = $1 AND (repeat IS NOT NULL OR last_fired_at IS NULL OR last_fired_at < at)
     ORDER BY id FOR UPDATE`,
    [userId],
  );
  const jobs: OutboxJob[] = [];
  for (const reminder of found.rows) {
    const anchor = reminderWallClock(reminder, from);
    // The occurrence due next keeps its local date; the anchor gives the time of day, undoing a gap's shift.
    const { year, month, day } = wallClockOf(reminder.at, from);
    let at = instantOf(
      { year, month, day, hour: anchor.hour, minute: anchor.minute, second: anchor.second, millisecond: anchor.millisecond },
      to,
    );
    if (reminder.repeat && at.getTime() <= now.getTime()) at = nextOccurrence({ repeat: reminder.repeat, anchor, zone: to }, now);
    if (at.getTime() === reminder.at.getTime()) continue;
    await client.query('UPDATE reminders SET at = $2, local_at = $3, updated_at = NOW() WHERE id = $1', [
      reminder.id,
      at,
      wallClockText(anchor),
    ]);
    jobs.push(reminderCancelJob(reminder.id, reminder.at), reminderFireJob(reminder.id, at, now.getTime()));
  }
  await Promise.all(jobs.map((job) => addOutboxJob(queues, job)));
}
