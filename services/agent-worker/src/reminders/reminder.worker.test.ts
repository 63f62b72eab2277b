import { randomUUID } from 'node:crypto';
import { UnrecoverableError, Worker, type Job } from 'bullmq';
import {
  createClientRedis,
  createDb,
  createLogger,
  createQueues,
  createWorkerRedis,
  jobId,
  reminderFireJobId,
  type Db,
  type DbClient,
  type Queues,
  type Redis,
} from '@assistant/shared';
import { sweepOverdueReminders } from './reminder-sweeper';
import { createReminderProcessor, fireReminder, type ReminderDeps } from './reminder.worker';

const DAY = 86_400_000;
let db: Db;
let redis: Redis;
let queues: Queues;
let deps: ReminderDeps;
let processJob: ReturnType<typeof createReminderProcessor>;

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string);
  redis = createClientRedis(process.env.REDIS_URL as string);
  queues = createQueues(redis, `${process.env.QUEUE_PREFIX}-reminders-${randomUUID().slice(0, 8)}`, () => undefined);
  deps = { db, queues, logger: createLogger('reminder-test', 'silent') };
  processJob = createReminderProcessor(deps);
});

afterAll(async () => {
  await queues.close();
  await redis.quit();
  await db.end();
});

function job(name: string, data: Record<string, unknown>): Job {
  return { id: randomUUID(), name, data } as unknown as Job;
}

const fire = (reminderId: string, at: Date) => processJob(job('fire', { reminderId, at: at.toISOString() }));

async function newUser(withMainSession = false): Promise<string> {
  const user = await db.query<{ id: string }>("INSERT INTO users (display_name) VALUES ('Reminder test') RETURNING id");
  const userId = user.rows[0]?.id as string;
  if (withMainSession) await db.query("INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main')", [userId]);
  return userId;
}

async function newReminder(userId: string, text: string, at: Date, repeat: 'daily' | 'weekly' | 'monthly' | null = null): Promise<string> {
  const id = randomUUID();
  await db.query('INSERT INTO reminders (id, user_id, text, text_key, at, repeat) VALUES ($1, $2, $3::text, lower($3::text), $4, $5)', [
    id,
    userId,
    text,
    at,
    repeat,
  ]);
  return id;
}

async function mainSessionMessages(userId: string) {
  const found = await db.query<{ role: string; content: string }>(
    `SELECT m.role, m.content FROM messages m JOIN sessions s ON s.id = m.session_id
     WHERE s.user_id = $1 AND s.session_key = 'agent:main:main' AND s.archived_at IS NULL ORDER BY m.id`,
    [userId],
  );
  return found.rows;
}

/** Until a statement waits for a lock that `holder`'s open transaction holds. */
async function waitUntilBlockedBy(holder: DbClient): Promise<void> {
  const pid = (await holder.query<{ pid: number }>('SELECT pg_backend_pid() AS pid')).rows[0]?.pid;
  while (!(await db.query('SELECT 1 FROM pg_stat_activity WHERE $1 = ANY(pg_blocking_pids(pid))', [pid])).rowCount) {
    await new Promise((resolve) => setImmediate(resolve));
  }
}

async function reminder(id: string) {
  const found = await db.query<{ at: Date; last_fired_at: Date | null }>('SELECT at, last_fired_at FROM reminders WHERE id = $1', [id]);
  return found.rows[0];
}

describe('fire', () => {
  it('posts the text once to the main session, creating the session, however often the job runs', async () => {
    const userId = await newUser();
    const at = new Date(Date.now() - 1_000);
    const id = await newReminder(userId, 'Drink water', at);
    await fire(id, at);
    await fire(id, at);
    expect(await mainSessionMessages(userId)).toEqual([{ role: 'assistant', content: 'Drink water' }]);
    const row = await reminder(id);
    expect(row?.at).toEqual(at);
    expect(row?.last_fired_at?.getTime()).toBeGreaterThanOrEqual(at.getTime());
    const sessions = await db.query('SELECT 1 FROM sessions WHERE user_id = $1', [userId]);
    expect(sessions.rowCount).toBe(1);
  });

  it('uses the existing main session', async () => {
    const userId = await newUser(true);
    const at = new Date(Date.now() - 1_000);
    await fire(await newReminder(userId, 'Call Ana', at), at);
    expect(await mainSessionMessages(userId)).toEqual([{ role: 'assistant', content: 'Call Ana' }]);
    expect((await db.query('SELECT 1 FROM sessions WHERE user_id = $1', [userId])).rowCount).toBe(1);
  });

  it('does nothing for a job made stale by an update, and makes sure the job for the new time exists', async () => {
    const userId = await newUser();
    const old = new Date(Date.now() - 1_000);
    const moved = new Date(Date.now() + DAY);
    const id = await newReminder(userId, 'Stretch', old);
    await db.query('UPDATE reminders SET at = $2 WHERE id = $1', [id, moved]);
    await fire(id, old);
    expect(await mainSessionMessages(userId)).toEqual([]);
    expect(await queues.reminders.getJobState(reminderFireJobId(id, moved))).toBe('delayed');
  });

  it('never fires a deleted reminder', async () => {
    const userId = await newUser();
    const at = new Date(Date.now() - 1_000);
    const id = await newReminder(userId, 'Gone', at);
    await db.query('DELETE FROM reminders WHERE id = $1', [id]);
    await fire(id, at);
    expect(await mainSessionMessages(userId)).toEqual([]);
    expect((await db.query('SELECT 1 FROM sessions WHERE user_id = $1', [userId])).rowCount).toBe(0);
  });

  it('moves a repeating reminder to its next time and schedules that, once, even when retried', async () => {
    const userId = await newUser();
    const at = new Date(Date.now() - 1_000);
    const id = await newReminder(userId, 'Meditate', at, 'daily');
    await fire(id, at);
    await fire(id, at);
    const next = new Date(at.getTime() + DAY);
    expect(await mainSessionMessages(userId)).toEqual([{ role: 'assistant', content: 'Meditate' }]);
    expect((await reminder(id))?.at).toEqual(next);
    const scheduled = await queues.reminders.getJob(reminderFireJobId(id, next));
    expect(scheduled?.data).toEqual({ reminderId: id, at: next.toISOString() });
    expect(scheduled?.opts.delay).toBeGreaterThan(DAY - 60_000);
    const delayed = await queues.reminders.getDelayed();
    expect(delayed.filter((entry) => entry.data.reminderId === id)).toHaveLength(1);
  });

  it('after downtime fires a weekly reminder once and moves it to its next time in the future', async () => {
    const userId = await newUser();
    const at = new Date(Date.now() - 15 * DAY - 1_000);
    const id = await newReminder(userId, 'Weekly review', at, 'weekly');
    await fire(id, at);
    expect(await mainSessionMessages(userId)).toHaveLength(1);
    expect((await reminder(id))?.at).toEqual(new Date(at.getTime() + 21 * DAY));
  });

  it('still sends the text to the channel when the worker died between the commit and queueing the delivery', async () => {
    const userId = await newUser();
    const at = new Date(Date.now() - 1_000);
    const once = await newReminder(userId, 'Pay rent', at);
    const daily = await newReminder(userId, 'Floss', at, 'daily');
    // The firing commits, then the process is killed before it queues anything: the job runs again.
    await fireReminder(deps, once, at);
    await fireReminder(deps, daily, at);
    await fire(once, at);
    await fire(daily, at);
    for (const id of [once, daily]) {
      const firedAt = (await reminder(id))?.last_fired_at as Date;
      const notify = await queues.deliveries.getJob(jobId('notify', `${id}.${firedAt.getTime()}`));
      expect(notify?.data).toEqual({ userId, text: id === once ? 'Pay rent' : 'Floss' });
    }
    expect(await mainSessionMessages(userId)).toHaveLength(2);
    expect(await queues.reminders.getJobState(reminderFireJobId(daily, new Date(at.getTime() + DAY)))).toBe('delayed');
  });

  it('sends a reminder moved by a zone change as its old time came once, though its new job ran before the old one', async () => {
    const userId = await newUser();
    // Its old job was already running (too late to cancel); the new time, 3 hours earlier, had passed: it fired at once.
    const old = new Date(Date.now() - 1_000);
    const moved = new Date(old.getTime() - 3 * 3_600_000);
    for (const repeat of [null, 'daily'] as const) {
      const id = await newReminder(userId, `Stand up (${repeat})`, moved, repeat);
      await fire(id, moved);
      await fire(id, old);
      const notices = (await queues.deliveries.getJobs(['waiting'])).filter((notice) => notice.id?.startsWith(`notify.${id}.`));
      expect(notices).toHaveLength(1);
    }
    expect(await mainSessionMessages(userId)).toHaveLength(2);
  });

  it('refuses a malformed payload for good', async () => {
    await expect(processJob(job('fire', { reminderId: 'reminder_1', at: 'soon' }))).rejects.toBeInstanceOf(UnrecoverableError);
    await expect(processJob(job('snooze', {}))).rejects.toBeInstanceOf(UnrecoverableError);
  });
});

describe('cancel', () => {
  it('removes the stale fire job, but keeps it when the reminder fires at that time again', async () => {
    const userId = await newUser();
    const first = new Date(Date.now() + DAY);
    const second = new Date(Date.now() + 2 * DAY);
    const id = await newReminder(userId, 'Water', first);
    await queues.reminders.add('fire', { reminderId: id, at: first.toISOString() }, { jobId: reminderFireJobId(id, first), delay: DAY });

    await processJob(job('cancel', { reminderId: id, at: first.toISOString() }));
    expect(await queues.reminders.getJobState(reminderFireJobId(id, first))).toBe('delayed');

    await db.query('UPDATE reminders SET at = $2 WHERE id = $1', [id, second]);
    await processJob(job('cancel', { reminderId: id, at: first.toISOString() }));
    expect(await queues.reminders.getJobState(reminderFireJobId(id, first))).toBe('unknown');
  });
});

describe("repeats in the user's zone", () => {
  it("keeps a New York user's daily 09:00 at 09:00 across the spring change, and a monthly one on its day", async () => {
    const userId = await newUser();
    await db.query("INSERT INTO user_preferences (user_id, timezone) VALUES ($1, 'America/New_York')", [userId]);
    const at = new Date('2026-03-07T14:00:00Z'); // Saturday 09:00 EST
    const daily = await newReminder(userId, 'Vitamins', at, 'daily');
    await fireReminder(deps, daily, at, new Date('2026-03-07T14:00:01Z'));
    expect((await reminder(daily))?.at).toEqual(new Date('2026-03-08T13:00:00Z')); // Sunday 09:00 EDT

    const monthly = await newReminder(userId, 'Rent', at, 'monthly');
    await db.query("UPDATE reminders SET local_at = '2026-01-31 09:00' WHERE id = $1", [monthly]);
    await fireReminder(deps, monthly, at, new Date('2026-03-07T14:00:01Z'));
    expect((await reminder(monthly))?.at).toEqual(new Date('2026-03-31T13:00:00Z'));
  });

  it('puts the next time of a daily reminder that fires during a change of zone in the new zone', async () => {
    const userId = await newUser();
    await db.query("INSERT INTO user_preferences (user_id, timezone) VALUES ($1, 'America/New_York')", [userId]);
    const id = await newReminder(userId, 'Vitamins', new Date('2026-03-10T13:00:00Z'), 'daily'); // 09:00 in New York
    const moved = new Date('2026-03-10T00:00:00Z'); // 09:00 in Tokyo
    // The zone change holds the reminder's row, moved, while the job of its new time starts.
    const change = await db.connect();
    try {
      await change.query('BEGIN');
      await change.query("UPDATE reminders SET at = $2, local_at = '2026-03-10 09:00' WHERE id = $1", [id, moved]);
      await change.query("UPDATE user_preferences SET timezone = 'Asia/Tokyo' WHERE user_id = $1", [userId]);
      const firing = fireReminder(deps, id, moved, new Date(moved.getTime() + 1_000));
      await waitUntilBlockedBy(change);
      await change.query('COMMIT');
      await firing;
    } finally {
      change.release();
    }
    expect((await reminder(id))?.at).toEqual(new Date('2026-03-11T00:00:00Z'));
  });
});

// Older than any other test's reminders: the sweep takes the most overdue first.
const longAgo = (minutes: number) => new Date(Date.UTC(1990, 0, 1, 0, minutes));

describe('the sweep of overdue reminders', () => {
  it('queues the fire job a lost Redis took with it, and the job fires the reminder once', async () => {
    const userId = await newUser();
    const at = longAgo(1);
    const id = await newReminder(userId, 'Lost with Redis', at);
    await sweepOverdueReminders(deps);
    await sweepOverdueReminders(deps);
    const queued = await queues.reminders.getJob(reminderFireJobId(id, at));
    expect(queued?.data).toEqual({ reminderId: id, at: at.toISOString() });
    expect(await queued?.getState()).toBe('waiting');
    await fire(id, at);
    expect(await mainSessionMessages(userId)).toEqual([{ role: 'assistant', content: 'Lost with Redis' }]);
  });

  it('retries a fire job that ran out of attempts, and leaves alone one still waiting and a fired reminder', async () => {
    const userId = await newUser();
    const [failedAt, waitingAt, firedAt] = [longAgo(2), longAgo(3), longAgo(4)];
    const failing = await newReminder(userId, 'Failed for good', failedAt);
    const waiting = await newReminder(userId, 'Still waiting', waitingAt);
    const fired = await newReminder(userId, 'Already fired', firedAt);
    await db.query('UPDATE reminders SET last_fired_at = at WHERE id = $1', [fired]);
    await queues.reminders.add(
      'fire',
      { reminderId: waiting, at: waitingAt.toISOString() },
      { jobId: reminderFireJobId(waiting, waitingAt), delay: DAY },
    );
    const connection = createWorkerRedis(process.env.REDIS_URL as string);
    const worker = new Worker(
      queues.reminders.name,
      async () => {
        throw new UnrecoverableError('the database was gone');
      },
      { connection, prefix: queues.reminders.opts.prefix, autorun: false },
    );
    const failedJob = await queues.reminders.add(
      'fire',
      { reminderId: failing, at: failedAt.toISOString() },
      { jobId: reminderFireJobId(failing, failedAt) },
    );
    const failedOnce = new Promise((resolve) => worker.on('failed', (job) => job?.id === failedJob.id && resolve(job)));
    void worker.run();
    await failedOnce;
    await worker.close();
    await connection.quit();

    await sweepOverdueReminders(deps);
    expect(await queues.reminders.getJobState(reminderFireJobId(failing, failedAt))).toBe('waiting');
    expect(await queues.reminders.getJobState(reminderFireJobId(waiting, waitingAt))).toBe('delayed');
    expect(await queues.reminders.getJobState(reminderFireJobId(fired, firedAt))).toBe('unknown');
    expect((await queues.reminders.getJob(reminderFireJobId(failing, failedAt)))?.attemptsMade).toBe(0);
  });

  it("queues every lost reminder even when another worker's sweep retried one of them first", async () => {
    const userId = await newUser();
    const [retriedAt, lostAt] = [longAgo(6), longAgo(7)];
    const retried = await newReminder(userId, 'Retried elsewhere', retriedAt);
    const lost = await newReminder(userId, 'Lost with Redis too', lostAt);
    const taken = { getState: async () => 'failed', retry: () => Promise.reject(new Error('Job is not in the failed state')) };
    const reminders = new Proxy(queues.reminders, {
      get: (target, name, receiver) =>
        name === 'getJob'
          ? async (id: string) => (id === reminderFireJobId(retried, retriedAt) ? taken : target.getJob(id))
          : (Reflect.get(target, name, receiver) as unknown),
    });
    await sweepOverdueReminders({ ...deps, queues: { ...queues, reminders } });
    expect(await queues.reminders.getJobState(reminderFireJobId(lost, lostAt))).toBe('waiting');
  });
});

describe("a disabled user's reminders", () => {
  const setDisabled = (userId: string, disabled: boolean) =>
    db.query('UPDATE users SET disabled_at = CASE WHEN $2 THEN NOW() END WHERE id = $1', [userId, disabled]);
  const notices = async (id: string) =>
    (await queues.deliveries.getJobs(['waiting'])).filter((notice) => notice.id?.startsWith(`notify.${id}.`));

  it('skips a one-off reminder that comes due, for good: recorded as fired, so no retry, sweep or re-enabling sends it late', async () => {
    const userId = await newUser();
    await setDisabled(userId, true);
    const at = longAgo(5);
    const id = await newReminder(userId, 'Renew passport', at);
    await fire(id, at);
    await fire(id, at);
    expect(await mainSessionMessages(userId)).toEqual([]);
    expect(await notices(id)).toEqual([]);
    expect((await reminder(id))?.last_fired_at?.getTime()).toBeGreaterThanOrEqual(at.getTime());

    await sweepOverdueReminders(deps);
    expect(await queues.reminders.getJobState(reminderFireJobId(id, at))).toBe('unknown');
    // Enabled again while a job of that firing still runs (a retry after a crash): it sends nothing either.
    await setDisabled(userId, false);
    await fire(id, at);
    expect(await mainSessionMessages(userId)).toEqual([]);
    expect(await notices(id)).toEqual([]);
  });

  it('moves a repeating reminder on to its next time, which fires as usual once the user is enabled again', async () => {
    const userId = await newUser();
    await setDisabled(userId, true);
    const at = new Date(Date.now() - 1_000);
    const id = await newReminder(userId, 'Water the plants', at, 'daily');
    await fire(id, at);
    const next = new Date(at.getTime() + DAY);
    expect(await mainSessionMessages(userId)).toEqual([]);
    expect(await notices(id)).toEqual([]);
    expect((await reminder(id))?.at).toEqual(next);
    expect(await queues.reminders.getJobState(reminderFireJobId(id, next))).toBe('delayed');

    await setDisabled(userId, false);
    await fire(id, next);
    expect(await mainSessionMessages(userId)).toEqual([{ role: 'assistant', content: 'Water the plants' }]);
    expect(await notices(id)).toHaveLength(1);
  });
});
