import { nameKey, ok, quoted } from '@assistant/shared';
import type { ToolContext, ToolHandlers } from './handler';
import { listEntities } from './entity-list';
import { alreadyExists, findSameName, insertReserved, loadOwnRow, lockedSameName, lockNames, nameTaken, plural } from './entity-support';

interface HabitRow {
  id: string;
  name: string;
  frequency: string | null;
  description: string | null;
}

const COLUMNS = 'id, name, frequency, description';

export const habitHandlers: Pick<ToolHandlers, 'save_habit' | 'update_habit' | 'delete_habit' | 'list_habits'> = {
  async save_habit(args, ctx) {
    const existing = await lockedSameName(ctx, 'habit', args.name);
    if (existing) return alreadyExists(ctx, 'habit', existing, 'named');
    const habit = await insertReserved(
      ctx,
      `INSERT INTO habits (id, user_id, name, name_key, frequency, description) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO NOTHING`,
      [ctx.entityId, ctx.userId, args.name, nameKey(args.name), args.frequency ?? null, args.description ?? null],
      () => loadHabit(ctx, ctx.entityId),
    );
    const fields = await habitFields(ctx, habit);
    return ok(
      `Habit ${quoted(fields.name)} saved [ID: ${fields.habit_id}]${fields.frequency ? ` (${fields.frequency})` : ''}.`,
      fields,
      `To set a reminder for it, call create_reminder with habit_id="${fields.habit_id}".`,
    );
  },

  async update_habit(args, ctx) {
    const target = await ctx.refs.resolve('habit', args.habit_id, ctx.db);
    await lockNames(ctx, 'habit');
    const habit = await loadHabit(ctx, target.id);
    if (args.name !== undefined) {
      const clash = await findSameName(ctx, 'habit', args.name, habit.id);
      if (clash) return nameTaken(ctx, 'habit', target, clash, 'named');
    }
    const next: HabitRow = {
      ...habit,
      name: args.name ?? habit.name,
      frequency: args.frequency === undefined ? habit.frequency : args.frequency,
      description: args.description === undefined ? habit.description : args.description,
    };
    await ctx.db.query(
      `UPDATE habits SET name = $3, name_key = $4, frequency = $5, description = $6, updated_at = NOW()
       WHERE id = $1 AND user_id = $2`,
      [habit.id, ctx.userId, next.name, nameKey(next.name), next.frequency, next.description],
    );
    const changes = [
      ...(next.name !== habit.name ? [`renamed from ${quoted(habit.name)}`] : []),
      ...(args.frequency !== undefined ? [next.frequency ? `frequency set to ${next.frequency}` : 'frequency cleared'] : []),
      ...(args.description !== undefined ? [next.description ? 'description updated' : 'description cleared'] : []),
    ];
    const fields = await habitFields(ctx, next);
    return ok(
      `Habit ${quoted(next.name)} updated [ID: ${fields.habit_id}]${changes.length > 0 ? `: ${changes.join(', ')}` : ''}.`,
      fields,
      `Its ref is still ${fields.habit_id}.`,
    );
  },

  async delete_habit(args, ctx) {
    const target = await ctx.refs.resolve('habit', args.habit_id, ctx.db);
    const linked = await ctx.db.query<{ reminders: number; goals: number }>(
      `SELECT (SELECT count(*) FROM reminders WHERE habit_id = $1 AND user_id = $2)::int AS reminders,
              (SELECT count(*) FROM goals WHERE habit_id = $1 AND user_id = $2)::int AS goals`,
      [target.id, ctx.userId],
    );
    const { reminders, goals } = linked.rows[0] ?? { reminders: 0, goals: 0 };
    // Its reminders and goals stay, unlinked, through ON DELETE SET NULL.
    await ctx.db.query('DELETE FROM habits WHERE id = $1 AND user_id = $2', [target.id, ctx.userId]);
    const kept =
      reminders + goals === 0 ? '' : `; its ${plural(reminders, 'reminder')} and ${plural(goals, 'goal')} remain, no longer linked to it`;
    return ok(
      `Habit ${quoted(target.label)} deleted [ID: ${target.ref}]${kept}.`,
      { habit_id: target.ref, name: target.label, unlinked_reminders: reminders, unlinked_goals: goals },
      `${target.ref} no longer exists; do not use it again.`,
    );
  },

  async list_habits(_args, ctx) {
    return listEntities(ctx, {
      entity: 'habit',
      columns: COLUMNS,
      rest: 'habits WHERE user_id = $1 ORDER BY name_key, name',
      params: [ctx.userId],
      none: { text: 'There are no habits yet.', hint: 'To add one, call save_habit.' },
      fields: fieldsOf,
      line: (habit: HabitRow) => ({ label: habit.name, ...(habit.frequency ? { details: `(${habit.frequency})` } : {}) }),
      hint: 'To change one, pass its habit_id.',
    });
  },
};

function loadHabit(ctx: ToolContext, id: string): Promise<HabitRow> {
  return loadOwnRow<HabitRow>(ctx, 'habit', `SELECT ${COLUMNS} FROM habits WHERE id = $1 AND user_id = $2`, id);
}

async function habitFields(ctx: ToolContext, habit: HabitRow) {
  return fieldsOf(habit, await ctx.refs.refFor('habit', habit.id));
}

function fieldsOf(habit: HabitRow, ref: string) {
  return {
    habit_id: ref,
    name: habit.name,
    ...(habit.frequency ? { frequency: habit.frequency } : {}),
    ...(habit.description ? { description: habit.description } : {}),
  };
}
