import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { reminderFireJobId } from '@assistant/shared';
import { Api, UUID, type StreamEvent } from '../scripts/lib/api';
import { injectFault, testDb } from './helpers/db';
import { afterTools, byUserText, FakeModel, userText, type ChatRequestBody } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * The tool catalogue through the real processes (docs/tools.md): habits, reminders and goals
 * addressed by refs across turns, other users' rows out of reach, reminders that fire (or, once
 * deleted, never do), creates that survive a killed tool worker, and no UUID ever shown to the model.
 */
const model = new FakeModel();
const system = new TestSystem();
let db: pg.Pool;
let removeFaults: () => Promise<void>;
let api: Api;
let redis: Redis;
let reminders: Queue;

/** The UUID of another user's habit, as if it had leaked to user B's model. */
let leakedHabitUuid = '';
/** When the fake model set the reminders of the current test, and for when. */
const scheduled = new Map<string, { setAt: number; at: number }>();

/** Every tool result the model received in this request, oldest first. */
function toolResults(body: ChatRequestBody): Record<string, unknown>[] {
  return body.messages.filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)) as Record<string, unknown>);
}

/** Tool results of the current turn only (after its user message). */
function turnResults(body: ChatRequestBody): Record<string, unknown>[] {
  const start = body.messages.map((m) => m.role).lastIndexOf('user');
  return toolResults({ ...body, messages: body.messages.slice(start) });
}

/** The habit ref the model saw last: what a model means by "it" after talking about one habit. */
function lastHabitRef(body: ChatRequestBody): string {
  const ref = toolResults(body)
    .map((result) => result.habit_id)
    .filter((value): value is string => typeof value === 'string')
    .at(-1);
  if (!ref) throw new Error('no habit ref in the conversation');
  return ref;
}

function remindIn(text: string, ms: number) {
  const at = Date.now() + ms;
  scheduled.set(text, { setAt: Date.now(), at });
  return { name: 'create_reminder', arguments: { text, at: new Date(at).toISOString() } };
}

beforeAll(async () => {
  await model.start();
  db = testDb();
  // A "Sleepy…" habit keeps its transaction open for 2 s after the row is inserted.
  removeFaults = await injectFault(
    db,
    'test_catalogue_faults',
    'habits',
    `IF NEW.name LIKE 'Sleepy%' THEN PERFORM pg_sleep(2); END IF;`,
    'AFTER',
  );
  const tomorrowAt7 = () => {
    const at = new Date();
    at.setUTCDate(at.getUTCDate() + 1);
    at.setUTCHours(7, 0, 0, 0);
    return at.toISOString();
  };
  model.script = byUserText({
    'create habit ': (body) =>
      afterTools(body) ? { content: 'Saved.' } : { toolCalls: [{ name: 'save_habit', arguments: { name: userText(body).slice(13) } }] },
    'remind me about it tomorrow at 7': (body) =>
      afterTools(body)
        ? { content: 'I will remind you.' }
        : {
            toolCalls: [
              { name: 'create_reminder', arguments: { text: 'Time to meditate', at: tomorrowAt7(), habit_id: lastHabitRef(body) } },
            ],
          },
    'rename it to ': (body) =>
      afterTools(body)
        ? { content: 'Renamed.' }
        : { toolCalls: [{ name: 'update_habit', arguments: { habit_id: lastHabitRef(body), name: userText(body).slice(13) } }] },
    'touch Segredo by name': (body) =>
      afterTools(body)
        ? { content: 'Done.' }
        : {
            toolCalls: [
              { name: 'list_habits', arguments: {} },
              { name: 'update_habit', arguments: { habit_id: 'Segredo', name: 'Hacked' } },
              { name: 'create_goal', arguments: { title: 'Steal it', habit_id: 'segredo' } },
              { name: 'delete_habit', arguments: { habit_id: 'habit_1' } },
            ],
          },
    'touch Segredo by id': (body) =>
      afterTools(body)
        ? { content: 'Done.' }
        : {
            toolCalls: [
              { name: 'update_habit', arguments: { habit_id: leakedHabitUuid, name: 'Hacked' } },
              { name: 'delete_habit', arguments: { habit_id: leakedHabitUuid } },
              { name: 'create_reminder', arguments: { text: 'Steal it', at: tomorrowAt7(), habit_id: leakedHabitUuid } },
            ],
          },
    'remind me in two seconds': (body) => (afterTools(body) ? { content: 'Done.' } : { toolCalls: [remindIn('Stretch now', 2_000)] }),
    'remind me twice and forget one': (body) => {
      const results = turnResults(body);
      if (results.length === 0) return { toolCalls: [remindIn('Kept one', 4_000), remindIn('Deleted one', 4_000)] };
      if (results.length === 2) {
        const deleted = results.find((result) => result.text === 'Deleted one');
        return { toolCalls: [{ name: 'delete_reminder', arguments: { reminder_id: String(deleted?.reminder_id) } }] };
      }
      return { content: 'Done.' };
    },
    'remind me at a bad time': (body) =>
      afterTools(body)
        ? { content: 'Sorry.' }
        : { toolCalls: [{ name: 'create_reminder', arguments: { text: 'Never', at: 'tomorrow at 7' } }] },
  });
  await system.start({ env: { OPENAI_BASE_URL: model.url } });
  api = new Api(system.url);
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  reminders = new Queue('reminders', { connection: redis, prefix: system.prefix });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await model.stop();
  await reminders.close();
  await redis.quit();
  await removeFaults();
  await db.end();
});

async function autonomousUser(): Promise<Api & { userId: string }> {
  return api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
}

/** The parsed results of a turn's tool calls, in the order they completed. */
function results(events: StreamEvent[]): Record<string, unknown>[] {
  return events.filter((event) => event.event === 'tool_complete').map((event) => JSON.parse(String(event.data.result)));
}

async function mainSessionMessages(user: Api): Promise<{ role: string; content: string; created_at: string }[]> {
  const res = await user.get('/v1/sessions/agent:main:main/messages');
  expect(res.status).toBe(200);
  return res.body;
}

describe('refs across the turns of one session', () => {
  it('creates a habit, reminds about it by the ref seen in the first turn, renames it: one habit, one reminder', async () => {
    const user = await autonomousUser();
    const first = await user.converse('create habit Meditação');
    expect(first.events.at(-1)?.data.status).toBe('completed');
    expect(results(first.events)).toEqual([
      expect.objectContaining({ success: true, habit_id: 'habit_1', message: 'Habit "Meditação" saved [ID: habit_1].' }),
    ]);

    const second = await user.converse('remind me about it tomorrow at 7');
    const request = model.requests.find((r) => userText(r.body) === 'remind me about it tomorrow at 7' && !afterTools(r.body));
    expect(request?.raw).toContain('[ID: habit_1]');
    expect(second.events.find((event) => event.event === 'tool_start')?.data.arguments).toMatchObject({ habit_id: 'habit_1' });
    const [reminder] = results(second.events);
    expect(reminder).toMatchObject({ success: true, reminder_id: 'reminder_1', habit_id: 'habit_1', text: 'Time to meditate' });
    expect(reminder?.message).toContain('for habit "Meditação" [ID: habit_1]');

    const third = await user.converse('rename it to Meditação guiada');
    expect(results(third.events)).toEqual([
      expect.objectContaining({
        success: true,
        habit_id: 'habit_1',
        name: 'Meditação guiada',
        message: expect.stringContaining('[ID: habit_1]'),
      }),
    ]);

    const habits = await db.query<{ id: string; name: string }>('SELECT id, name FROM habits WHERE user_id = $1', [user.userId]);
    expect(habits.rows.map((row) => row.name)).toEqual(['Meditação guiada']);
    const stored = await db.query<{ habit_id: string; text: string }>('SELECT habit_id, text FROM reminders WHERE user_id = $1', [
      user.userId,
    ]);
    expect(stored.rows).toEqual([{ habit_id: habits.rows[0]?.id, text: 'Time to meditate' }]);
  });
});

describe("another user's habit", () => {
  it("is out of reach of user B, by its name, by its ref in A's session, and by its UUID", async () => {
    const owner = await autonomousUser();
    expect((await owner.converse('create habit Segredo')).events.at(-1)?.data.status).toBe('completed');
    const found = await db.query<{ id: string }>('SELECT id FROM habits WHERE user_id = $1', [owner.userId]);
    leakedHabitUuid = found.rows[0]?.id as string;

    const intruder = await autonomousUser();
    const byName = results((await intruder.converse('touch Segredo by name')).events);
    expect(byName[0]).toMatchObject({ success: true, habits: [] });
    expect(byName.slice(1).map((result) => result.success)).toEqual([false, false, false]);
    expect(byName[1]?.error).toBe('No habit named "Segredo" was found.');
    expect(byName[3]?.error).toContain('habit_1 was not shown in this conversation');

    const byId = results((await intruder.converse('touch Segredo by id')).events);
    expect(byId).toHaveLength(3);
    for (const result of byId) expect(result).toMatchObject({ success: false, error: expect.stringContaining('UUID') });
    expect(JSON.stringify([...byName, ...byId])).not.toMatch(UUID);

    const owned = await db.query('SELECT name, frequency, description FROM habits WHERE id = $1', [leakedHabitUuid]);
    expect(owned.rows).toEqual([{ name: 'Segredo', frequency: null, description: null }]);
    const intruderRows = await db.query(
      'SELECT (SELECT count(*) FROM habits WHERE user_id = $1)::int + (SELECT count(*) FROM goals WHERE user_id = $1)::int + (SELECT count(*) FROM reminders WHERE user_id = $1)::int AS n',
      [intruder.userId],
    );
    expect(intruderRows.rows[0].n).toBe(0);
  });
});

describe('reminders fire', () => {
  it('stores a reminder set two seconds ahead in the main session within five seconds, not before its time', async () => {
    const user = await autonomousUser();
    expect((await user.converse('remind me in two seconds')).events.at(-1)?.data.status).toBe('completed');
    const { setAt, at } = scheduled.get('Stretch now') as { setAt: number; at: number };
    let fired: { created_at: string } | undefined;
    await waitFor(
      async () => {
        fired = (await mainSessionMessages(user)).find((m) => m.role === 'assistant' && m.content === 'Stretch now');
        return fired !== undefined;
      },
      'the reminder message',
      { timeoutMs: setAt + 5_000 - Date.now() },
    );
    expect(new Date(fired?.created_at as string).getTime()).toBeGreaterThanOrEqual(at - 250);
    const row = await db.query('SELECT last_fired_at IS NOT NULL AS fired FROM reminders WHERE user_id = $1', [user.userId]);
    expect(row.rows).toEqual([{ fired: true }]);
  });

  it('never fires a deleted reminder, while its twin set for the same time does', async () => {
    const user = await autonomousUser();
    const { turnId, events } = await user.converse('remind me twice and forget one');
    expect(events.at(-1)?.data.status).toBe('completed');
    const { at } = scheduled.get('Deleted one') as { at: number };
    expect(Date.now()).toBeLessThan(at);
    const deletedTask = await db.query<{ entity_id: string }>(
      "SELECT entity_id FROM tasks WHERE turn_id = $1 AND tool_name = 'create_reminder' AND arguments->>'text' = 'Deleted one'",
      [turnId],
    );
    const jobId = reminderFireJobId(deletedTask.rows[0]?.entity_id as string, new Date(at));

    await waitFor(
      async () => (await mainSessionMessages(user)).some((m) => m.role === 'assistant' && m.content === 'Kept one'),
      'the kept reminder',
      { timeoutMs: at + 5_000 - Date.now() },
    );
    // Past its time, and its job gone (removed on delete) or done (a no-op): it had every chance to fire.
    await waitFor(
      async () => Date.now() > at + 1_000 && ['unknown', 'completed'].includes(await reminders.getJobState(jobId)),
      'the deleted reminder job to settle',
      { timeoutMs: 10_000 },
    );
    const messages = await mainSessionMessages(user);
    expect(messages.filter((m) => m.content === 'Deleted one')).toEqual([]);
    expect(messages.filter((m) => m.content === 'Kept one')).toHaveLength(1);
  });

  it('answers a time that is not ISO 8601 with success: false, creating nothing', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('remind me at a bad time');
    const [result] = results(events);
    expect(result).toMatchObject({ success: false, error: expect.stringContaining('at: must be an ISO 8601 date-time') });
    expect((await db.query('SELECT 1 FROM reminders WHERE user_id = $1', [user.userId])).rowCount).toBe(0);
  });
});

describe('crash safety', () => {
  it('creates the habit once when the tool worker is killed after the insert, before the job completes', async () => {
    const user = await autonomousUser();
    const { turn_id: turnId } = await user.send('create habit Sleepy habit');
    const started = await user.events(turnId, { until: (event) => event.event === 'tool_start' });
    // The row is inserted and the transaction is open (the trigger sleeps inside it): now kill.
    await waitFor(
      async () =>
        (
          await db.query(
            "SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep' AND query LIKE 'INSERT INTO habits%'",
          )
        ).rowCount === 1,
      'the insert to be in flight',
      { timeoutMs: 10_000 },
    );
    await system.signal('tool-worker', 'SIGKILL');
    system.spawn('tool-worker');
    const events = await user.events(turnId, { lastEventId: started.at(-1)?.id, timeoutMs: 40_000 });
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(results(events)).toEqual([expect.objectContaining({ success: true, habit_id: 'habit_1' })]);
    const rows = await db.query("SELECT count(*)::int AS n FROM habits WHERE user_id = $1 AND name = 'Sleepy habit'", [user.userId]);
    expect(rows.rows[0].n).toBe(1);
  });
});

describe('the model never sees a UUID', () => {
  it('finds none in any request the fake model received in this file', () => {
    expect(model.requests.length).toBeGreaterThan(15);
    for (const request of model.requests) expect(request.raw).not.toMatch(UUID);
  });
});
