import { randomUUID } from 'node:crypto';
import { toolCatalog, type ToolResult } from '@assistant/shared';
import { goalHandlers } from './goal.handlers';
import { habitHandlers } from './habit.handlers';
import { insertTestUser, type TestUser } from '../../../../tests/helpers/db';
import { containsUuidAnywhere, ToolHarness } from '../../../../tests/helpers/tool-harness';

const harness = new ToolHarness({ ...goalHandlers, save_habit: habitHandlers.save_habit });

/** Every call of this file goes through here: no result, success or not, may show a UUID. */
async function run(...params: Parameters<typeof harness.run>): Promise<ToolResult> {
  const result = await harness.run(...params);
  expect(containsUuidAnywhere(result)).toBe(false);
  return result;
}

async function createGoal(user: TestUser, title: string, extra: Record<string, unknown> = {}): Promise<string> {
  const result = await run('create_goal', { title, ...extra }, user);
  expect(result.success).toBe(true);
  return result.goal_id as string;
}

async function goals(user: TestUser) {
  const found = await harness.pool.query(
    `SELECT g.title, g.title_key, g.target_date::text AS target_date, h.name AS habit FROM goals g LEFT JOIN habits h ON h.id = g.habit_id
     WHERE g.user_id = $1 ORDER BY g.created_at`,
    [user.userId],
  );
  return found.rows;
}

function invalid(name: keyof typeof toolCatalog, args: unknown): string[] {
  const parsed = toolCatalog[name].input.safeParse(args);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`);
}

afterAll(async () => {
  await harness.close();
});

describe('create_goal', () => {
  it('creates a goal with a date and a habit, answering with both refs', async () => {
    const user = await insertTestUser(harness.pool);
    await run('save_habit', { name: 'Corrida' }, user);
    const result = await run('create_goal', { title: 'Run 10k', target_date: '2030-12-31', habit_id: 'corrida' }, user);
    expect(result).toEqual({
      success: true,
      goal_id: 'goal_1',
      title: 'Run 10k',
      target_date: '2030-12-31',
      habit_id: 'habit_1',
      message: 'Goal "Run 10k" created [ID: goal_1], to reach by 2030-12-31, for habit "Corrida" [ID: habit_1].',
      next_step: 'To change or delete it later, pass goal_id="goal_1".',
    });
    expect(await goals(user)).toEqual([{ title: 'Run 10k', title_key: 'run 10k', target_date: '2030-12-31', habit: 'Corrida' }]);
  });

  it('inserts one row when a create is retried with the same entity id', async () => {
    const user = await insertTestUser(harness.pool);
    const entityId = randomUUID();
    const first = await run('create_goal', { title: 'Read 20 books' }, user, entityId);
    expect(first.message).toBe('Goal "Read 20 books" created [ID: goal_1].');
    expect(await run('create_goal', { title: 'Read 20 books' }, user, entityId)).toEqual(first);
    expect(await goals(user)).toHaveLength(1);
  });

  it('refuses a title already used, ignoring case and accents', async () => {
    const user = await insertTestUser(harness.pool);
    await createGoal(user, 'Aprender violão');
    const result = await run('create_goal', { title: 'APRENDER VIOLAO' }, user);
    expect(result).toEqual({
      success: false,
      error: 'A goal titled "Aprender violão" already exists [ID: goal_1].',
      hint: 'Use goal_1 instead of creating it again.',
      goal_id: 'goal_1',
    });
  });

  it('refuses an unknown habit and a UUID habit, creating nothing', async () => {
    const user = await insertTestUser(harness.pool);
    expect(await run('create_goal', { title: 'Calm', habit_id: 'habit_4' }, user)).toMatchObject({ success: false });
    expect(await run('create_goal', { title: 'Calm', habit_id: randomUUID() }, user)).toMatchObject({
      success: false,
      hint: expect.stringContaining('ref'),
    });
    expect(await goals(user)).toEqual([]);
  });

  it('refuses invalid fields before touching the database', () => {
    expect(invalid('create_goal', { title: 'Run', target_date: '2030-02-30' })).toEqual(['target_date: must be a date like 2026-12-31']);
    expect(invalid('create_goal', { title: 'Run', target_date: 'next year' })).toEqual(['target_date: must be a date like 2026-12-31']);
    // ISO 8601 has a year 0000; PostgreSQL's dates do not, so it would fail the call twice instead.
    expect(invalid('create_goal', { title: 'Run', target_date: '0000-12-31' })).toEqual(['target_date: must be a date like 2026-12-31']);
    expect(invalid('create_goal', { title: 'x'.repeat(256) })).toEqual(['title: must be at most 255 characters']);
  });
});

describe('list_goals', () => {
  it('lists goals by target date, undated last, with refs', async () => {
    const user = await insertTestUser(harness.pool);
    await run('save_habit', { name: 'Yoga' }, user);
    await createGoal(user, 'Someday');
    await createGoal(user, 'Flexible', { target_date: '2030-06-01', habit_id: 'habit_1' });
    const result = await run('list_goals', {}, user);
    expect(result).toEqual({
      success: true,
      goals: [
        { goal_id: 'goal_2', title: 'Flexible', target_date: '2030-06-01', habit_id: 'habit_1' },
        { goal_id: 'goal_1', title: 'Someday' },
      ],
      message: 'There are 2 goals:\n- "Flexible" [ID: goal_2] by 2030-06-01\n- "Someday" [ID: goal_1]',
      next_step: 'To change one, pass its goal_id.',
    });
  });

  it("says when there are none, and never lists another user's goals", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createGoal(owner, 'Secret');
    expect(await run('list_goals', {}, other)).toMatchObject({ success: true, goals: [], message: 'There are no goals yet.' });
  });
});

describe('update_goal', () => {
  it('renames by ref and clears the date, keeping the ref', async () => {
    const user = await insertTestUser(harness.pool);
    await createGoal(user, 'Run 5k', { target_date: '2030-01-01' });
    const result = await run('update_goal', { goal_id: 'goal_1', title: 'Run 10k', target_date: null }, user);
    expect(result).toEqual({
      success: true,
      goal_id: 'goal_1',
      title: 'Run 10k',
      message: 'Goal "Run 10k" updated [ID: goal_1], renamed from "Run 5k".',
      next_step: 'Its ref is still goal_1.',
    });
    expect(await goals(user)).toEqual([{ title: 'Run 10k', title_key: 'run 10k', target_date: null, habit: null }]);
  });

  it('finds the goal by title ignoring case and accents, and links a habit', async () => {
    const user = await insertTestUser(harness.pool);
    await createGoal(user, 'Aprender violão');
    await run('save_habit', { name: 'Practice' }, user);
    const result = await run('update_goal', { goal_id: 'aprender VIOLAO', habit_id: 'practice', target_date: '2031-01-31' }, user);
    expect(result).toMatchObject({ success: true, goal_id: 'goal_1', habit_id: 'habit_1', target_date: '2031-01-31' });
    expect(result.message).toBe('Goal "Aprender violão" updated [ID: goal_1], to reach by 2031-01-31, for habit "Practice" [ID: habit_1].');
  });

  it('refuses an unknown and an ambiguous goal, a UUID, and the title of another goal', async () => {
    const user = await insertTestUser(harness.pool);
    await createGoal(user, 'Run');
    await createGoal(user, 'Swim');
    await harness.pool.query(
      `INSERT INTO goals (id, user_id, title, title_key) VALUES (gen_random_uuid(), $1, 'Read', 'read'), (gen_random_uuid(), $1, 'READ', 'read')`,
      [user.userId],
    );
    const unknown = await run('update_goal', { goal_id: 'Fly', title: 'x' }, user);
    expect(unknown).toMatchObject({ success: false, error: expect.stringContaining('No goal named "Fly"') });
    const ambiguous = await run('update_goal', { goal_id: 'read', title: 'x' }, user);
    expect(ambiguous).toMatchObject({ success: false, candidates: [{ name: 'Read' }, { name: 'READ' }] });
    const uuid = await run('update_goal', { goal_id: randomUUID(), title: 'x' }, user);
    expect(uuid).toMatchObject({ success: false, hint: expect.stringContaining('ref') });
    const clash = await run('update_goal', { goal_id: 'swim', title: 'run' }, user);
    expect(clash).toMatchObject({ success: false, goal_id: 'goal_2', existing_goal_id: 'goal_1' });
  });

  it('refuses invalid fields and an update that changes nothing', () => {
    expect(invalid('update_goal', { goal_id: 'goal_1' })).toEqual([
      'arguments: give at least one of title, target_date or habit_id to change',
    ]);
    expect(invalid('update_goal', { goal_id: 'goal_1', target_date: '31/12/2030' })).toEqual([
      'target_date: must be a date like 2026-12-31',
    ]);
  });

  it("cannot see or change another user's goal, by title, by a planted ref or by its UUID", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createGoal(owner, 'Secret');
    const stored = await harness.pool.query<{ id: string }>('SELECT id FROM goals WHERE user_id = $1', [owner.userId]);
    const id = stored.rows[0]?.id as string;
    expect(await run('update_goal', { goal_id: 'Secret', title: 'Mine' }, other)).toMatchObject({ success: false });
    await harness.pool.query("INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'goal', 2, $2)", [
      other.sessionId,
      id,
    ]);
    expect(await run('delete_goal', { goal_id: 'goal_2' }, other)).toMatchObject({ success: false });
    expect(await run('delete_goal', { goal_id: id }, other)).toMatchObject({ success: false });
    expect(await goals(owner)).toMatchObject([{ title: 'Secret' }]);
  });
});

describe('delete_goal', () => {
  it('deletes by title, and then no longer knows the ref', async () => {
    const user = await insertTestUser(harness.pool);
    await createGoal(user, 'Meditação diária');
    const result = await run('delete_goal', { goal_id: 'meditacao diaria' }, user);
    expect(result).toEqual({
      success: true,
      goal_id: 'goal_1',
      title: 'Meditação diária',
      message: 'Goal "Meditação diária" deleted [ID: goal_1].',
      next_step: 'goal_1 no longer exists; do not use it again.',
    });
    expect(await goals(user)).toEqual([]);
    expect(await run('delete_goal', { goal_id: 'goal_1' }, user)).toMatchObject({ success: false });
  });
});
