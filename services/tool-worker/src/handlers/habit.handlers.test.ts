import { randomUUID } from 'node:crypto';
import { toolCatalog, type ToolResult } from '@assistant/shared';
import { goalHandlers } from './goal.handlers';
import { habitHandlers } from './habit.handlers';
import { reminderHandlers } from './reminder.handlers';
import { insertTestUser, type TestUser } from '../../../../tests/helpers/db';
import { containsUuidAnywhere, ToolHarness } from '../../../../tests/helpers/tool-harness';

const harness = new ToolHarness({
  ...habitHandlers,
  create_reminder: reminderHandlers.create_reminder,
  create_goal: goalHandlers.create_goal,
});

/** Every call of this file goes through here: no result, success or not, may show a UUID. */
async function run(...params: Parameters<typeof harness.run>): Promise<ToolResult> {
  const result = await harness.run(...params);
  expect(containsUuidAnywhere(result)).toBe(false);
  return result;
}

async function saveHabit(user: TestUser, name: string, extra: Record<string, unknown> = {}): Promise<string> {
  const result = await run('save_habit', { name, ...extra }, user);
  expect(result.success).toBe(true);
  return result.habit_id as string;
}

async function habits(user: TestUser) {
  const found = await harness.pool.query(
    'SELECT name, name_key, frequency, description FROM habits WHERE user_id = $1 ORDER BY created_at',
    [user.userId],
  );
  return found.rows;
}

/** The problems the tool worker would report for these arguments (it validates before any handler runs). */
function invalid(name: keyof typeof toolCatalog, args: unknown): string[] {
  const parsed = toolCatalog[name].input.safeParse(args);
  return parsed.success ? [] : parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`);
}

afterAll(async () => {
  await harness.close();
});

describe('save_habit', () => {
  it('saves a habit and answers with its ref, fields, message and next step', async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('save_habit', { name: ' Meditação ', frequency: 'daily', description: 'Ten minutes' }, user);
    expect(result).toEqual({
      success: true,
      habit_id: 'habit_1',
      name: 'Meditação',
      frequency: 'daily',
      description: 'Ten minutes',
      message: 'Habit "Meditação" saved [ID: habit_1] (daily).',
      next_step: 'To set a reminder for it, call create_reminder with habit_id="habit_1".',
    });
    expect(await habits(user)).toEqual([{ name: 'Meditação', name_key: 'meditacao', frequency: 'daily', description: 'Ten minutes' }]);
  });

  it('inserts one row when a create is retried with the same entity id', async () => {
    const user = await insertTestUser(harness.pool);
    const entityId = randomUUID();
    const first = await run('save_habit', { name: 'Yoga' }, user, entityId);
    const retry = await run('save_habit', { name: 'Yoga' }, user, entityId);
    expect(retry).toEqual(first);
    expect(await habits(user)).toHaveLength(1);
  });

  it('refuses a name already used, ignoring case and accents, pointing at the existing habit', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Meditação');
    const result = await run('save_habit', { name: 'MEDITACAO' }, user);
    expect(result).toEqual({
      success: false,
      error: 'A habit named "Meditação" already exists [ID: habit_1].',
      hint: 'Use habit_1 instead of creating it again.',
      habit_id: 'habit_1',
    });
    expect(await habits(user)).toHaveLength(1);
  });

  it('lets only one of two parallel saves of the same name through', async () => {
    const user = await insertTestUser(harness.pool);
    const results = await Promise.all([run('save_habit', { name: 'Read' }, user), run('save_habit', { name: 'read' }, user)]);
    expect(results.map((result) => result.success).sort()).toEqual([false, true]);
    expect(await habits(user)).toHaveLength(1);
  });

  it('refuses invalid fields before touching the database', () => {
    expect(invalid('save_habit', { name: '   ' })).toEqual(['name: must not be blank']);
    expect(invalid('save_habit', { name: 'x'.repeat(101) })).toEqual(['name: must be at most 100 characters']);
    expect(invalid('save_habit', { name: 'Run', frequency: ' ' })).toEqual(['frequency: must not be blank']);
    expect(invalid('save_habit', { name: 'Run', frequency: 'x'.repeat(101) })).toEqual(['frequency: must be at most 100 characters']);
  });

  it("keeps a frequency in the user's own words", async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('save_habit', { name: 'Swim', frequency: ' 3 times a week ' }, user);
    expect(result).toMatchObject({
      success: true,
      frequency: '3 times a week',
      message: 'Habit "Swim" saved [ID: habit_1] (3 times a week).',
    });
    expect(await habits(user)).toEqual([{ name: 'Swim', name_key: 'swim', frequency: '3 times a week', description: null }]);
  });
});

describe('list_habits', () => {
  it('lists habits by name with refs, frequency and description', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Yoga', { frequency: 'weekly' });
    await saveHabit(user, 'meditação', { description: 'Morning' });
    const result = await run('list_habits', {}, user);
    expect(result).toEqual({
      success: true,
      habits: [
        { habit_id: 'habit_2', name: 'meditação', description: 'Morning' },
        { habit_id: 'habit_1', name: 'Yoga', frequency: 'weekly' },
      ],
      message: 'There are 2 habits:\n- "meditação" [ID: habit_2]\n- "Yoga" [ID: habit_1] (weekly)',
      next_step: 'To change one, pass its habit_id.',
    });
  });

  it("says when there are none, and never lists another user's habits", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await saveHabit(owner, 'Secret');
    expect(await run('list_habits', {}, other)).toMatchObject({ success: true, habits: [], message: 'There are no habits yet.' });
  });
});

describe('update_habit', () => {
  it('renames by ref, keeping the ref, and reports what changed', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Meditação', { frequency: 'daily' });
    const result = await run('update_habit', { habit_id: 'habit_1', name: 'Meditação guiada' }, user);
    expect(result).toEqual({
      success: true,
      habit_id: 'habit_1',
      name: 'Meditação guiada',
      frequency: 'daily',
      message: 'Habit "Meditação guiada" updated [ID: habit_1]: renamed from "Meditação".',
      next_step: 'Its ref is still habit_1.',
    });
    expect(await habits(user)).toEqual([{ name: 'Meditação guiada', name_key: 'meditacao guiada', frequency: 'daily', description: null }]);
  });

  it('takes new_name for name, as the rename tools call it, and still checks it', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Walk');
    const result = await run('update_habit', { habit_id: 'habit_1', new_name: 'Long walk' }, user);
    expect(result).toMatchObject({ success: true, habit_id: 'habit_1', name: 'Long walk' });
    const blank = await run('update_habit', { habit_id: 'habit_1', new_name: ' ' }, user);
    expect(blank).toMatchObject({ success: false, error: 'Invalid arguments for update_habit: name: must not be blank.' });
    // Given both, the tool's own name wins.
    const both = await run('update_habit', { habit_id: 'habit_1', name: 'Walk', new_name: 'Run' }, user);
    expect(both).toMatchObject({ success: true, name: 'Walk' });
  });

  it('finds the habit by name ignoring case and accents, and sets or clears fields', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Meditação', { frequency: 'daily', description: 'Calm' });
    const result = await run('update_habit', { habit_id: 'meditacao', frequency: 'weekdays', description: null }, user);
    expect(result).toMatchObject({ success: true, habit_id: 'habit_1', frequency: 'weekdays' });
    expect(result).not.toHaveProperty('description');
    expect(result.message).toBe('Habit "Meditação" updated [ID: habit_1]: frequency set to weekdays, description cleared.');
    expect(await habits(user)).toEqual([{ name: 'Meditação', name_key: 'meditacao', frequency: 'weekdays', description: null }]);
  });

  it('takes null for the name as left out, but null for frequency as clearing it', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Yoga', { frequency: 'daily' });
    const result = await run('update_habit', { habit_id: 'yoga', name: null, frequency: null }, user);
    expect(result).toMatchObject({ success: true, message: 'Habit "Yoga" updated [ID: habit_1]: frequency cleared.' });
    expect(await habits(user)).toEqual([{ name: 'Yoga', name_key: 'yoga', frequency: null, description: null }]);
    const nothing = await run('update_habit', { habit_id: 'yoga', name: null }, user);
    expect(nothing).toMatchObject({ success: false, error: expect.stringContaining('give at least one of name') });
  });

  it('allows a change of case only, but refuses the name of another habit', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'yoga');
    await saveHabit(user, 'Run');
    expect(await run('update_habit', { habit_id: 'habit_1', name: 'Yoga' }, user)).toMatchObject({ success: true, name: 'Yoga' });
    const clash = await run('update_habit', { habit_id: 'habit_1', name: 'RUN' }, user);
    expect(clash).toMatchObject({ success: false, habit_id: 'habit_1', existing_habit_id: 'habit_2' });
    expect(clash.error).toBe('Another habit named "Run" already exists [ID: habit_2].');
  });

  it('refuses an unknown name or ref, listing candidates with refs', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Yoga');
    const byName = await run('update_habit', { habit_id: 'Swimming', name: 'Swim' }, user);
    expect(byName).toMatchObject({ success: false, candidates: [{ ref: 'habit_1', name: 'Yoga' }] });
    expect(byName.error).toBe('No habit named "Swimming" was found. Candidates: "Yoga" [ID: habit_1].');
    const byRef = await run('update_habit', { habit_id: 'habit_7', name: 'Swim' }, user);
    expect(byRef).toMatchObject({ success: false, candidates: [{ ref: 'habit_1', name: 'Yoga' }] });
    expect(byRef.error).toContain('habit_7');
  });

  it('refuses an ambiguous name, listing both habits', async () => {
    const user = await insertTestUser(harness.pool);
    // Two habits can share a folded name only if written outside the tools (older data, imports).
    await harness.pool.query(
      `INSERT INTO habits (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Walk', 'walk'), (gen_random_uuid(), $1, 'walk', 'walk')`,
      [user.userId],
    );
    const result = await run('update_habit', { habit_id: 'WALK', frequency: 'daily' }, user);
    expect(result).toMatchObject({ success: false, candidates: [{ ref: 'habit_1' }, { ref: 'habit_2' }] });
    expect(result.error).toMatch(/^"WALK" matches 2 habits\./);
  });

  it('refuses a UUID with a hint to use the ref', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Yoga');
    const stored = await harness.pool.query<{ id: string }>('SELECT id FROM habits WHERE user_id = $1', [user.userId]);
    const result = await run('update_habit', { habit_id: stored.rows[0]?.id, name: 'Pilates' }, user);
    expect(result).toMatchObject({ success: false, hint: expect.stringContaining('habit_1') });
    expect(await habits(user)).toMatchObject([{ name: 'Yoga' }]);
  });

  it('refuses invalid fields and an update that changes nothing', () => {
    expect(invalid('update_habit', { habit_id: 'habit_1' })).toEqual([
      'arguments: give at least one of name, frequency or description to change',
    ]);
    expect(invalid('update_habit', { habit_id: 'habit_1', name: '' })).toEqual(['name: must not be blank']);
    expect(invalid('update_habit', { habit_id: '', name: 'x' })).toEqual(['habit_id: habit_id must not be empty']);
    expect(invalid('update_habit', { habit_id: 'habit_1', frequency: '' })).toEqual(['frequency: must not be blank']);
  });

  it("cannot see or change another user's habit, by name, by a planted ref or by its UUID", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await saveHabit(owner, 'Secret');
    const byName = await run('update_habit', { habit_id: 'Secret', name: 'Mine' }, other);
    expect(byName).toMatchObject({ success: false, error: 'No habit named "Secret" was found.' });
    const stored = await harness.pool.query<{ id: string }>('SELECT id FROM habits WHERE user_id = $1', [owner.userId]);
    const id = stored.rows[0]?.id as string;
    await harness.pool.query("INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'habit', 5, $2)", [
      other.sessionId,
      id,
    ]);
    expect(await run('update_habit', { habit_id: 'habit_5', name: 'Mine' }, other)).toMatchObject({ success: false });
    expect(await run('delete_habit', { habit_id: id }, other)).toMatchObject({ success: false });
    expect(await habits(owner)).toMatchObject([{ name: 'Secret' }]);
  });
});

describe('delete_habit', () => {
  it('deletes by name, keeping its reminders and goals unlinked, and then no longer knows the ref', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Meditação');
    const at = new Date(Date.now() + 86_400_000).toISOString();
    expect(await run('create_reminder', { text: 'Meditate', at, habit_id: 'habit_1' }, user)).toMatchObject({ success: true });
    expect(await run('create_goal', { title: 'Calm mind', habit_id: 'habit_1' }, user)).toMatchObject({ success: true });
    const result = await run('delete_habit', { habit_id: 'MEDITAÇÃO' }, user);
    expect(result).toEqual({
      success: true,
      habit_id: 'habit_1',
      name: 'Meditação',
      unlinked_reminders: 1,
      unlinked_goals: 1,
      message: 'Habit "Meditação" deleted [ID: habit_1]; its 1 reminder and 1 goal remain, no longer linked to it.',
      next_step: 'habit_1 no longer exists; do not use it again.',
    });
    expect(await habits(user)).toEqual([]);
    const linked = await harness.pool.query(
      'SELECT habit_id FROM reminders WHERE user_id = $1 UNION ALL SELECT habit_id FROM goals WHERE user_id = $1',
      [user.userId],
    );
    expect(linked.rows).toEqual([{ habit_id: null }, { habit_id: null }]);
    expect(await run('delete_habit', { habit_id: 'habit_1' }, user)).toMatchObject({ success: false });
  });

  it('answers with the ref as the session gave it when the model writes its number with leading zeros', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Yoga');
    const result = await run('delete_habit', { habit_id: 'habit_001' }, user);
    expect(result).toMatchObject({ success: true, habit_id: 'habit_1', message: 'Habit "Yoga" deleted [ID: habit_1].' });
  });

  it('takes a ref copied with the marker it was shown in ("[ID: habit_2]" after the name or alone), in any case', async () => {
    const user = await insertTestUser(harness.pool);
    await saveHabit(user, 'Yoga');
    await saveHabit(user, 'Run');
    for (const value of ['[ID: habit_2]', '"Run" [ID: habit_2]', 'Run [id: HABIT_2]', 'Habit_2']) {
      const result = await run('update_habit', { habit_id: value, frequency: 'daily' }, user);
      expect(result).toMatchObject({ success: true, habit_id: 'habit_2', name: 'Run' });
    }
    // A marker for another kind is that kind's ref, refused as usual.
    expect(await run('update_habit', { habit_id: '[ID: goal_2]', frequency: 'daily' }, user)).toMatchObject({
      success: false,
      error: expect.stringContaining('goal_2 is a goal, not a habit'),
    });
  });

  it("does not delete another user's habit", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await saveHabit(owner, 'Yoga');
    expect(await run('delete_habit', { habit_id: 'Yoga' }, other)).toMatchObject({ success: false });
    expect(await habits(owner)).toHaveLength(1);
  });
});
