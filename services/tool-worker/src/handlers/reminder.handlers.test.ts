import { randomUUID } from 'node:crypto';
import { reminderFireJobId, toolCatalog, type OutboxJob, type ToolResult } from '@assistant/shared';
import { habitHandlers } from './habit.handlers';
import { reminderHandlers } from './reminder.handlers';
import { insertTestUser, type TestUser } from '../../../../tests/helpers/db';
import { containsUuidAnywhere, ToolHarness } from '../../../../tests/helpers/tool-harness';

const harness = new ToolHarness({ ...reminderHandlers, save_habit: habitHandlers.save_habit });

const HOUR = 3_600_000;
const inHours = (hours: number) => new Date(Date.now() + hours * HOUR).toISOString();

/** Every call of this file goes through here: no result, success or not, may show a UUID. */
async function run(...params: Parameters<typeof harness.run>): Promise<ToolResult> {
  const result = await harness.run(...params);
  expect(containsUuidAnywhere(result)).toBe(false);
  return result;
}

async function createReminder(user: TestUser, text: string, at: string, extra: Record<string, unknown> = {}): Promise<string> {
  const result = await run('create_reminder', { text, at, ...extra }, user);
  expect(result.success).toBe(true);
  return result.reminder_id as string;
}

async function reminders(user: TestUser) {
  const found = await harness.pool.query<{
    id: string;
    text: string;
    text_key: string;
    at: Date;
    repeat: string | null;
    habit: string | null;
  }>(
    `SELECT r.id, r.text, r.text_key, r.at, r.repeat, h.name AS habit FROM reminders r LEFT JOIN habits h ON h.id = r.habit_id
     WHERE r.user_id = $1 ORDER BY r.created_at`,
    [user.userId],
  );
  return found.rows;
}

/** The jobs handlers asked to enqueue after their commit, for this user's reminders (deleted ones included). */
function scheduledFor(reminderId: string): { name: string; jobId: string; at: unknown; delayMs?: number }[] {
  return harness.scheduled
    .filter((entry): entry is OutboxJob => entry.kind === 'job' && entry.data.reminderId === reminderId)
    .map((entry) => ({
      name: entry.name,
      jobId: entry.jobId,
      at: entry.data.at,
      ...(entry.delayMs !== undefined ? { delayMs: entry.delayMs } : {}),
    }));
}

function invalid(name: keyof typeof toolCatalog, args: unknown): string[] {
  const parsed = toolCatalog[name].input.safeParse(args);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`);
}

afterAll(async () => {
  await harness.close();
});

describe('create_reminder', () => {
  it('creates a reminder for a habit, answering with both refs, and schedules its firing after the commit', async () => {
    const user = await insertTestUser(harness.pool);
    await run('save_habit', { name: 'Meditação' }, user);
    const at = '2031-05-01T07:00:00-03:00';
    const result = await run('create_reminder', { text: 'Meditate', at, habit_id: 'meditacao', repeat: 'daily' }, user);
    expect(result).toEqual({
      success: true,
      reminder_id: 'reminder_1',
      text: 'Meditate',
      at: '2031-05-01T10:00:00.000Z',
      at_local: '2031-05-01 10:00 (UTC)',
      repeat: 'daily',
      habit_id: 'habit_1',
      message: 'Reminder "Meditate" set for 2031-05-01 10:00 (UTC) [ID: reminder_1], repeating daily, for habit "Meditação" [ID: habit_1].',
      next_step: 'To change or cancel it, pass reminder_id="reminder_1" to update_reminder or delete_reminder.',
    });
    const [row] = await reminders(user);
    expect(row).toMatchObject({ text: 'Meditate', text_key: 'meditate', repeat: 'daily', habit: 'Meditação' });
    expect(row?.at.toISOString()).toBe('2031-05-01T10:00:00.000Z');
    const [job] = scheduledFor(row?.id as string);
    expect(job).toMatchObject({ name: 'fire', at: '2031-05-01T10:00:00.000Z', jobId: reminderFireJobId(row?.id as string, new Date(at)) });
    expect(job?.delayMs).toBeGreaterThan(0);
  });

  it('inserts one row and names one job when a create is retried with the same entity id', async () => {
    const user = await insertTestUser(harness.pool);
    const entityId = randomUUID();
    const first = await run('create_reminder', { text: 'Water', at: inHours(2) }, user, entityId);
    const retry = await run('create_reminder', { text: 'Water', at: first.at }, user, entityId);
    expect(retry).toEqual(first);
    expect(await reminders(user)).toHaveLength(1);
    expect(new Set(scheduledFor(entityId).map((job) => job.jobId)).size).toBe(1);
  });

  it('refuses the same text at the same time, but allows it at another time', async () => {
    const user = await insertTestUser(harness.pool);
    const at = inHours(3);
    await createReminder(user, 'Water', at);
    const result = await run('create_reminder', { text: 'WATER', at }, user);
    expect(result).toEqual({
      success: false,
      error: 'The same reminder at the same time already exists [ID: reminder_1].',
      hint: 'Use reminder_1 instead of creating it again.',
      reminder_id: 'reminder_1',
    });
    expect(await createReminder(user, 'Water', inHours(4))).toBe('reminder_2');
  });

  it('refuses a time in the past, telling the model the current time', async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('create_reminder', { text: 'Late', at: '2020-01-01T00:00:00Z' }, user);
    expect(result).toMatchObject({ success: false, error: 'The time 2020-01-01T00:00:00Z is in the past.' });
    expect(result.hint).toMatch(/^It is now \d{4}-/);
    expect(await reminders(user)).toEqual([]);
  });

  it('refuses a time past the year 9999, where a time no longer has an ISO 8601 form to schedule it by', async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('create_reminder', { text: 'Far', at: '9999-12-31T23:00:00-03:00' }, user);
    expect(result).toMatchObject({ success: false, error: 'The time 9999-12-31T23:00:00-03:00 is too far in the future.' });
    expect(result.hint).toContain('before the year 10000');
    expect(await reminders(user)).toEqual([]);
    await createReminder(user, 'Far', '9999-12-31T20:00:00Z', { repeat: 'daily' });
    const moved = await run('update_reminder', { reminder_id: 'reminder_1', at: '9999-12-31T23:00:00-03:00' }, user);
    expect(moved).toMatchObject({ success: false, error: 'The time 9999-12-31T23:00:00-03:00 is too far in the future.' });
  });

  it('refuses an unknown, an ambiguous or a UUID habit, creating nothing', async () => {
    const user = await insertTestUser(harness.pool);
    await harness.pool.query(
      `INSERT INTO habits (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Walk', 'walk'), (gen_random_uuid(), $1, 'walk', 'walk')`,
      [user.userId],
    );
    const unknown = await run('create_reminder', { text: 'Go', at: inHours(1), habit_id: 'Swim' }, user);
    expect(unknown).toMatchObject({ success: false, error: expect.stringContaining('No habit named "Swim"') });
    const ambiguous = await run('create_reminder', { text: 'Go', at: inHours(1), habit_id: 'walk' }, user);
    expect(ambiguous).toMatchObject({ success: false, candidates: [{ ref: 'habit_1' }, { ref: 'habit_2' }] });
    const uuid = await run('create_reminder', { text: 'Go', at: inHours(1), habit_id: randomUUID() }, user);
    expect(uuid).toMatchObject({ success: false, hint: expect.stringContaining('ref') });
    expect(await reminders(user)).toEqual([]);
  });

  it('takes an empty string for an optional habit_id or repeat as left out, as models send one', async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('create_reminder', { text: 'Stretch', at: inHours(2), habit_id: '', repeat: ' ' }, user);
    expect(result).toMatchObject({ success: true, reminder_id: 'reminder_1' });
    expect(result).not.toHaveProperty('habit_id');
    expect(result).not.toHaveProperty('repeat');
    // A required argument left empty is still refused.
    expect(await run('create_reminder', { text: '', at: inHours(2) }, user)).toMatchObject({
      success: false,
      error: 'Invalid arguments for create_reminder: text: must not be blank.',
    });
  });

  it('takes repeat in any case, as models capitalise it ("Daily", " WEEKLY ")', async () => {
    const user = await insertTestUser(harness.pool);
    const daily = await run('create_reminder', { text: 'Stretch', at: inHours(2), repeat: 'Daily' }, user);
    expect(daily).toMatchObject({ success: true, repeat: 'daily' });
    const weekly = await run('update_reminder', { reminder_id: 'reminder_1', repeat: ' WEEKLY ' }, user);
    expect(weekly).toMatchObject({ success: true, repeat: 'weekly' });
    expect((await reminders(user)).map((row) => row.repeat)).toEqual(['weekly']);
  });

  it('refuses invalid fields before touching the database', () => {
    const at = inHours(1);
    expect(invalid('create_reminder', { text: 'Go', at: 'tomorrow at 7' })).toEqual([
      "at: must be an ISO 8601 date-time, like 2026-05-01T07:00:00 (the user's local time) or 2026-05-01T07:00:00-03:00",
    ]);
    // Without an offset it is the user's local time (docs/tools.md#times): valid.
    expect(invalid('create_reminder', { text: 'Go', at: '2031-05-01T07:00:00' })).toEqual([]);
    // A date alone is not a time to fire at.
    expect(invalid('create_reminder', { text: 'Go', at: '2031-05-01' })[0]).toMatch(/^at: /);
    expect(invalid('create_reminder', { text: 'Go', at: '2031-05-01 at 7' })).toEqual([
      "at: must be an ISO 8601 date-time, like 2026-05-01T07:00:00 (the user's local time) or 2026-05-01T07:00:00-03:00",
    ]);
    expect(invalid('create_reminder', { text: 'Go', at, repeat: 'hourly' })[0]).toMatch(/^repeat: /);
    expect(invalid('create_reminder', { text: ' ', at })).toEqual(['text: must not be blank']);
  });
});

describe('list_reminders', () => {
  it('lists reminders soonest first with refs, times, repetition and habit refs', async () => {
    const user = await insertTestUser(harness.pool);
    await run('save_habit', { name: 'Yoga' }, user);
    await createReminder(user, 'Later', '2031-01-02T08:00:00Z');
    await createReminder(user, 'Stretch', '2031-01-01T08:00:00Z', { habit_id: 'habit_1', repeat: 'weekly' });
    const result = await run('list_reminders', {}, user);
    expect(result).toEqual({
      success: true,
      reminders: [
        {
          reminder_id: 'reminder_2',
          text: 'Stretch',
          at: '2031-01-01T08:00:00.000Z',
          at_local: '2031-01-01 08:00 (UTC)',
          repeat: 'weekly',
          habit_id: 'habit_1',
        },
        { reminder_id: 'reminder_1', text: 'Later', at: '2031-01-02T08:00:00.000Z', at_local: '2031-01-02 08:00 (UTC)' },
      ],
      message: [
        'There are 2 reminders, soonest first (times in UTC):',
        '- "Stretch" [ID: reminder_2] fires at 2031-01-01 08:00 (UTC), repeating weekly',
        '- "Later" [ID: reminder_1] fires at 2031-01-02 08:00 (UTC)',
      ].join('\n'),
      next_step: 'To change or cancel one, pass its reminder_id.',
    });
  });

  it('tells a one-off reminder that fired from one skipped while the account was disabled', async () => {
    const user = await insertTestUser(harness.pool);
    await createReminder(user, 'Fired', '2031-01-01T08:00:00Z');
    await createReminder(user, 'Skipped', '2031-01-02T08:00:00Z');
    await harness.pool.query(`UPDATE reminders SET last_fired_at = at, last_fire_skipped = (text = 'Skipped') WHERE user_id = $1`, [
      user.userId,
    ]);
    const { message } = await run('list_reminders', {}, user);
    expect(String(message).split('\n').slice(1)).toEqual([
      '- "Fired" [ID: reminder_1] fired at 2031-01-01 08:00 (UTC) (give it a new time to fire again)',
      '- "Skipped" [ID: reminder_2] skipped at 2031-01-02 08:00 (UTC), the account being disabled then (give it a new time to fire again)',
    ]);
  });

  it("says when there are none, and never lists another user's reminders", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createReminder(owner, 'Secret', inHours(1));
    expect(await run('list_reminders', {}, other)).toMatchObject({ success: true, reminders: [], message: 'There are no reminders.' });
  });
});

describe('update_reminder', () => {
  it('moves a reminder by ref: the old job is cancelled and a job for the new time scheduled', async () => {
    const user = await insertTestUser(harness.pool);
    await createReminder(user, 'Water', '2031-03-01T09:00:00Z');
    const result = await run('update_reminder', { reminder_id: 'reminder_1', at: '2031-03-01T10:30:00Z', repeat: 'daily' }, user);
    expect(result).toEqual({
      success: true,
      reminder_id: 'reminder_1',
      text: 'Water',
      at: '2031-03-01T10:30:00.000Z',
      at_local: '2031-03-01 10:30 (UTC)',
      repeat: 'daily',
      message: 'Reminder "Water" updated [ID: reminder_1]: fires at 2031-03-01 10:30 (UTC), repeating daily.',
      next_step: 'Its ref is still reminder_1.',
    });
    const [row] = await reminders(user);
    expect(row?.at.toISOString()).toBe('2031-03-01T10:30:00.000Z');
    expect(scheduledFor(row?.id as string).map((job) => [job.name, job.at])).toEqual([
      ['fire', '2031-03-01T09:00:00.000Z'],
      ['cancel', '2031-03-01T09:00:00.000Z'],
      ['fire', '2031-03-01T10:30:00.000Z'],
    ]);
  });

  it('finds a reminder by text ignoring case and accents; changing only the text schedules nothing new', async () => {
    const user = await insertTestUser(harness.pool);
    await run('save_habit', { name: 'Yoga' }, user);
    await createReminder(user, 'Meditação', inHours(5), { habit_id: 'habit_1' });
    const result = await run('update_reminder', { reminder_id: 'MEDITACAO', text: 'Meditação guiada', habit_id: null }, user);
    expect(result).toMatchObject({ success: true, reminder_id: 'reminder_1', text: 'Meditação guiada' });
    expect(result).not.toHaveProperty('habit_id');
    const [row] = await reminders(user);
    expect(row).toMatchObject({ text: 'Meditação guiada', text_key: 'meditacao guiada', habit: null });
    expect(scheduledFor(row?.id as string)).toHaveLength(1);
  });

  it('links a reminder to a habit, reporting the habit by its ref', async () => {
    const user = await insertTestUser(harness.pool);
    await createReminder(user, 'Breathe', inHours(5));
    await run('save_habit', { name: 'Meditação' }, user);
    const result = await run('update_reminder', { reminder_id: 'breathe', habit_id: 'habit_1' }, user);
    expect(result).toMatchObject({ success: true, habit_id: 'habit_1' });
    expect(result.message).toContain('for habit "Meditação" [ID: habit_1]');
  });

  it('refuses an unknown and an ambiguous reminder, a UUID, a past time, and a clash with another reminder', async () => {
    const user = await insertTestUser(harness.pool);
    const at = inHours(6);
    await createReminder(user, 'Water', at);
    await createReminder(user, 'Water', inHours(7));
    await createReminder(user, 'Tea', at);
    const unknown = await run('update_reminder', { reminder_id: 'Coffee', text: 'x' }, user);
    expect(unknown).toMatchObject({ success: false, error: expect.stringContaining('No reminder named "Coffee"') });
    const ambiguous = await run('update_reminder', { reminder_id: 'water', text: 'x' }, user);
    expect(ambiguous).toMatchObject({ success: false, candidates: [{ ref: 'reminder_1' }, { ref: 'reminder_2' }] });
    const ids = (await reminders(user)).map((row) => row.id);
    const uuid = await run('update_reminder', { reminder_id: ids[0], text: 'x' }, user);
    expect(uuid).toMatchObject({ success: false, hint: expect.stringContaining('reminder_1') });
    const past = await run('update_reminder', { reminder_id: 'reminder_1', at: '2020-01-01T00:00:00Z' }, user);
    expect(past).toMatchObject({ success: false, error: 'The time 2020-01-01T00:00:00Z is in the past.' });
    const clash = await run('update_reminder', { reminder_id: 'tea', text: 'water' }, user);
    expect(clash).toMatchObject({ success: false, reminder_id: 'reminder_3', existing_reminder_id: 'reminder_1' });
    expect((await reminders(user)).map((row) => row.text)).toEqual(['Water', 'Water', 'Tea']);
  });

  it('refuses invalid fields and an update that changes nothing', () => {
    expect(invalid('update_reminder', { reminder_id: 'reminder_1' })).toEqual([
      'arguments: give at least one of text, at, repeat or habit_id to change',
    ]);
    expect(invalid('update_reminder', { reminder_id: 'reminder_1', at: '07:00' })[0]).toMatch(/^at: /);
    expect(invalid('update_reminder', { reminder_id: 'reminder_1', repeat: 'hourly' })[0]).toMatch(/^repeat: /);
  });

  it("cannot see or change another user's reminder, by text, by a planted ref or by its UUID", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createReminder(owner, 'Secret', inHours(1));
    const [row] = await reminders(owner);
    expect(await run('update_reminder', { reminder_id: 'Secret', text: 'Mine' }, other)).toMatchObject({ success: false });
    await harness.pool.query("INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'reminder', 3, $2)", [
      other.sessionId,
      row?.id,
    ]);
    expect(await run('update_reminder', { reminder_id: 'reminder_3', text: 'Mine' }, other)).toMatchObject({ success: false });
    expect(await run('delete_reminder', { reminder_id: row?.id }, other)).toMatchObject({ success: false });
    expect(await reminders(owner)).toMatchObject([{ text: 'Secret' }]);
  });
});

describe('delete_reminder', () => {
  it('deletes by text, cancelling its job, and then no longer knows the ref', async () => {
    const user = await insertTestUser(harness.pool);
    const at = inHours(8);
    await createReminder(user, 'Water', at);
    const [row] = await reminders(user);
    const result = await run('delete_reminder', { reminder_id: 'water' }, user);
    expect(result).toEqual({
      success: true,
      reminder_id: 'reminder_1',
      text: 'Water',
      at: new Date(at).toISOString(),
      at_local: `${at.slice(0, 10)} ${at.slice(11, 16)} (UTC)`,
      message: 'Reminder "Water" deleted [ID: reminder_1]; it will not fire.',
      next_step: 'reminder_1 no longer exists; do not use it again.',
    });
    expect(await reminders(user)).toEqual([]);
    expect(scheduledFor(row?.id as string).map((job) => job.name)).toEqual(['fire', 'cancel']);
    expect(await run('delete_reminder', { reminder_id: 'reminder_1' }, user)).toMatchObject({ success: false });
  });

  it('finds a reminder by a text as long as a reminder text may be', async () => {
    const user = await insertTestUser(harness.pool);
    const text = `Água ${'x'.repeat(495)}`;
    await createReminder(user, text, inHours(8));
    const result = await run('delete_reminder', { reminder_id: text.replace('Água', 'agua') }, user);
    expect(result).toMatchObject({ success: true, reminder_id: 'reminder_1' });
    expect(await reminders(user)).toEqual([]);
  });

  it('says how many reminders a text matches when there are more than the ten it lists, deleting none', async () => {
    const user = await insertTestUser(harness.pool);
    for (let hours = 1; hours <= 12; hours++) await createReminder(user, 'Water', inHours(hours));
    const result = await run('delete_reminder', { reminder_id: 'water' }, user);
    expect(result).toMatchObject({ success: false });
    expect(result.error).toMatch(
      /^"water" matches 12 reminders \(the first 10 listed\)\. Candidates: "Water" at .+ \(UTC\) \[ID: reminder_1\], /,
    );
    expect(result.candidates).toHaveLength(10);
    expect(await reminders(user)).toHaveLength(12);
  });
});

describe("times in the user's zone (docs/tools.md#times)", () => {
  async function userIn(zone: string): Promise<TestUser> {
    const user = await insertTestUser(harness.pool);
    await harness.pool.query('INSERT INTO user_preferences (user_id, timezone) VALUES ($1, $2)', [user.userId, zone]);
    return user;
  }

  it('reads `at` without an offset as local time, with one as that instant, and shows local times with the zone', async () => {
    const user = await userIn('America/Sao_Paulo');
    const local = await run('create_reminder', { text: 'Call mom', at: '2031-11-24T15:00:00' }, user);
    expect(local).toMatchObject({
      success: true,
      at: '2031-11-24T15:00:00.000-03:00',
      at_local: '2031-11-24 15:00 (America/Sao_Paulo)',
      message: 'Reminder "Call mom" set for 2031-11-24 15:00 (America/Sao_Paulo) [ID: reminder_1].',
    });
    const instant = await run('create_reminder', { text: 'Standup', at: '2031-11-24T15:00:00Z' }, user);
    expect(instant).toMatchObject({ at_local: '2031-11-24 12:00 (America/Sao_Paulo)' });
    const rows = await reminders(user);
    expect(rows.map((row) => row.at.toISOString())).toEqual(['2031-11-24T18:00:00.000Z', '2031-11-24T15:00:00.000Z']);
    const list = await run('list_reminders', {}, user);
    expect(list.message).toContain('- "Standup" [ID: reminder_2] fires at 2031-11-24 12:00 (America/Sao_Paulo)');
  });

  it("tells reminders of the same text apart by when they fire, on the user's clock, when a text matches several", async () => {
    const user = await userIn('America/Sao_Paulo');
    await createReminder(user, 'Water', '2031-11-24T09:00:00');
    await createReminder(user, 'Water', '2031-11-24T15:00:00');
    const result = await run('delete_reminder', { reminder_id: 'water' }, user);
    expect(result).toMatchObject({
      success: false,
      error:
        '"water" matches 2 reminders. Candidates: "Water" at 2031-11-24 09:00 (America/Sao_Paulo) [ID: reminder_1], "Water" at 2031-11-24 15:00 (America/Sao_Paulo) [ID: reminder_2].',
    });
    expect(await reminders(user)).toHaveLength(2);
  });

  it('reads other ISO 8601 spellings: no seconds with an offset, a basic offset, a space for the T', async () => {
    const user = await userIn('America/Sao_Paulo');
    const spellings = ['2031-11-24T15:00Z', '2031-11-24T13:00-03:00', '2031-11-24T14:00:00-0300', '2031-11-24 15:00'];
    const results = await Promise.all(spellings.map((at, i) => run('create_reminder', { text: `Spelling ${i}`, at }, user)));
    expect(results.map((result) => result.at_local)).toEqual([
      '2031-11-24 12:00 (America/Sao_Paulo)',
      '2031-11-24 13:00 (America/Sao_Paulo)',
      '2031-11-24 14:00 (America/Sao_Paulo)',
      '2031-11-24 15:00 (America/Sao_Paulo)',
    ]);
    const moved = await run('update_reminder', { reminder_id: 'Spelling 0', at: '2031-11-25 09:30-03' }, user);
    expect(moved).toMatchObject({ success: true, at_local: '2031-11-25 09:30 (America/Sao_Paulo)' });
  });

  it('moves a time in the spring-forward gap forward and takes the first of two overlapping ones', async () => {
    const user = await userIn('America/New_York');
    const gap = await run('create_reminder', { text: 'Gap', at: '2031-03-09T02:30:00' }, user);
    expect(gap).toMatchObject({ at: '2031-03-09T03:30:00.000-04:00' });
    const overlap = await run('create_reminder', { text: 'Overlap', at: '2031-11-02T01:30:00' }, user);
    expect(overlap).toMatchObject({ at: '2031-11-02T01:30:00.000-04:00' });
  });

  it('starts a weekdays reminder set for a Saturday on Monday, and a monthly one keeps its local time', async () => {
    const user = await userIn('Europe/Lisbon');
    // 2031-03-29 is a Saturday; Lisbon moves to summer time on Sunday the 30th.
    const weekdays = await run('create_reminder', { text: 'Work', at: '2031-03-29T09:00:00', repeat: 'weekdays' }, user);
    expect(weekdays).toMatchObject({ at: '2031-03-31T09:00:00.000+01:00', repeat: 'weekdays' });
    const monthly = await run('update_reminder', { reminder_id: 'reminder_1', repeat: 'monthly' }, user);
    expect(monthly).toMatchObject({ at: '2031-04-29T09:00:00.000+01:00', repeat: 'monthly' });
  });
});
