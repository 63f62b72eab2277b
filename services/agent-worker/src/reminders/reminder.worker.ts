import {
  addOutboxJob,
  jobProcessor,
  MAIN_SESSION_KEY,
  nextOccurrence,
  reminderWallClock,
  reminderFireJob,
  reminderFireJobId,
  reminderNoticeJob,
  userTimeZone,
  withTransaction,
  type DbClient,
  type JobProcessor,
  type OutboxEntry,
  type ReminderRepeat,
  type ReminderTiming,
  type Runtime,
} from '@assistant/shared';

export type ReminderDeps = Pick<Runtime, 'db' | 'queues' | 'logger'>;

interface DueReminder extends ReminderTiming {
  id: string;
  user_id: string;
  text: string;
  fired: boolean;
  last_fired_at: Date | null;
  /** The firing at `last_fired_at` was skipped: its user was disabled, nothing was sent. */
  last_fire_skipped: boolean;
  /** An admin disabled the user (docs/api.md#operators): a firing now is skipped. */
  user_disabled: boolean;
}

/**
 * The reminders processor. `fire` posts a reminder's text to its user's main session exactly
 * once, however often the job is retried or republished; `cancel` removes a fire job that an
 * update or delete made stale.
 */
export function createReminderProcessor(deps: ReminderDeps): JobProcessor<'reminders'> {
  return jobProcessor('reminders', {
    fire: async ({ reminderId, at }) => {
      for (const entry of await fireReminder(deps, reminderId, new Date(at))) await enqueue(deps, entry);
    },
    cancel: ({ reminderId, at }) => cancelStaleJob(deps, reminderId, new Date(at)),
  });
}

/**
 * In one transaction, and only while the reminder still exists and still fires at `at` (an
 * update moves `at`, a delete removes the row: either turns this job into a no-op), stores its
 * text as an assistant message of the user's main session and moves a repeating one to its next
 * time. Returns the jobs to enqueue after the commit: the next occurrence, or, when this job was
 * stale, the job for the reminder's current time (its deterministic id makes that a no-op when it
 * exists, and restores it when a crash between a commit and its enqueue lost it).
 *
 * A disabled user's reminder is skipped: nothing is stored or sent, but it is recorded as fired
 * all the same (and a repeating one moves on), so a one-off reminder does not go out days late
 * when the user is enabled again, and the sweeper, which re-fires only unfired reminders, leaves
 * it alone.
 */
export async function fireReminder(deps: ReminderDeps, reminderId: string, at: Date, now = new Date()): Promise<OutboxEntry[]> {
  return withTransaction(deps.db, async (client) => {
    const found = await client.query<DueReminder>(
      `SELECT id, user_id, text, repeat, at, local_at::text AS local_at, last_fired_at, COALESCE(last_fired_at >= at, false) AS fired,
              last_fire_skipped, EXISTS (SELECT 1 FROM users u WHERE u.id = reminders.user_id AND u.disabled_at IS NOT NULL) AS user_disabled
       FROM reminders WHERE id = $1 FOR UPDATE`,
      [reminderId],
    );
    const reminder = found.rows[0];
    if (!reminder) return [];
    // This time already fired, but the process may have died before queueing its delivery: queue it
    // again (its job id, and the delivery record of that id, make this a no-op when it went out).
    // A skipped firing had no delivery, whether or not the user has been enabled since.
    const firedAt =
      reminder.last_fired_at !== null && reminder.last_fired_at.getTime() >= at.getTime() && !reminder.last_fire_skipped
        ? [reminderNoticeJob(reminder, reminder.last_fired_at)]
        : [];
    if (reminder.at.getTime() !== at.getTime()) {
      return reminder.fired ? firedAt : [...firedAt, reminderFireJob(reminder.id, reminder.at, now.getTime())];
    }
    if (reminder.fired) return firedAt;

    const skip = reminder.user_disabled;
    if (skip) deps.logger.info({ reminderId, due: at }, 'reminder skipped: its user is disabled');
    else await postToMainSession(client, reminder);
    const nextAt = reminder.repeat ? await nextTime(client, reminder, reminder.repeat, now) : reminder.at;
    // last_fired_at never precedes `at`, so "fired" (last_fired_at >= at) holds even if this job ran a little early.
    const fired = await client.query<{ last_fired_at: Date }>(
      `UPDATE reminders SET last_fired_at = GREATEST($2::timestamptz, at), at = $3, last_fire_skipped = $4
       WHERE id = $1 RETURNING last_fired_at`,
      [reminder.id, now, nextAt, skip],
    );
    // Also to the user's last-used channel, once.
    const afterCommit: OutboxEntry[] = skip ? [] : [reminderNoticeJob(reminder, (fired.rows[0] as { last_fired_at: Date }).last_fired_at)];
    if (reminder.repeat) afterCommit.push(reminderFireJob(reminder.id, nextAt, now.getTime()));
    return afterCommit;
  });
}

/**
 * A repeating reminder's next time on its local rhythm after now: after downtime it fires once,
 * not once per missed period. The user's zone is read by a statement of its own, after the one
 * that locked the reminder: a zone change that held that lock has committed by then and is seen
 * here, while the locking statement, begun before that commit, would still read the old zone.
 */
async function nextTime(client: DbClient, reminder: DueReminder, repeat: ReminderRepeat, now: Date): Promise<Date> {
  const zone = await userTimeZone(client, reminder.user_id);
  return nextOccurrence(
    { repeat, anchor: reminderWallClock(reminder, zone), zone },
    new Date(Math.max(now.getTime(), reminder.at.getTime())),
  );
}

async function postToMainSession(client: DbClient, reminder: DueReminder): Promise<void> {
  // The same upsert as accepting a message: the main session exists from its first use on.
  const session = await client.query<{ id: string }>(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, $2)
     ON CONFLICT (user_id, session_key) WHERE archived_at IS NULL DO UPDATE SET last_activity_at = NOW()
     RETURNING id`,
    [reminder.user_id, MAIN_SESSION_KEY],
  );
  await client.query(`INSERT INTO messages (session_id, role, content) VALUES ($1, 'assistant', $2)`, [
    (session.rows[0] as { id: string }).id,
    reminder.text,
  ]);
}

/**
 * Removes the fire job for `at` unless the reminder fires at `at` again (updated back to it). The
 * row lock keeps an update from committing in between. A job already running is left alone
 * (remove answers 0): it will find nothing to do.
 */
async function cancelStaleJob(deps: ReminderDeps, reminderId: string, at: Date): Promise<void> {
  await withTransaction(deps.db, async (client) => {
    const found = await client.query<{ at: Date }>('SELECT at FROM reminders WHERE id = $1 FOR UPDATE', [reminderId]);
    if (found.rows[0]?.at.getTime() === at.getTime()) return;
    await deps.queues.reminders.remove(reminderFireJobId(reminderId, at));
  });
}

async function enqueue(deps: ReminderDeps, entry: OutboxEntry): Promise<void> {
  if (entry.kind === 'job') await addOutboxJob(deps.queues, entry);
}
