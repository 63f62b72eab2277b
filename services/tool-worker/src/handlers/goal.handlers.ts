import { nameKey, ok, quoted } from '@assistant/shared';
import type { ToolContext, ToolHandlers } from './handler';
import { listEntities } from './entity-list';
import {
  alreadyExists,
  findSameName,
  habitPart,
  insertReserved,
  loadOwnRow,
  lockedSameName,
  lockNames,
  nameTaken,
  resolveHabitLink,
} from './entity-support';

interface GoalRow {
  id: string;
  title: string;
  /** YYYY-MM-DD: read as text, since pg would turn a DATE into a local-midnight Date. */
  target_date: string | null;
  habit_id: string | null;
  habit_name: string | null;
}

const COLUMNS = 'g.id, g.title, g.target_date::text AS target_date, g.habit_id, h.name AS habit_name';
const FROM = 'goals g LEFT JOIN habits h ON h.id = g.habit_id AND h.user_id = g.user_id';

export const goalHandlers: Pick<ToolHandlers, 'create_goal' | 'update_goal' | 'delete_goal' | 'list_goals'> = {
  async create_goal(args, ctx) {
    const habit = await resolveHabitLink(ctx, args.habit_id);
    const existing = await lockedSameName(ctx, 'goal', args.title);
    if (existing) return alreadyExists(ctx, 'goal', existing, 'titled');
    const goal = await insertReserved(
      ctx,
      `INSERT INTO goals (id, user_id, habit_id, title, title_key, target_date) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO NOTHING`,
      [ctx.entityId, ctx.userId, habit?.id ?? null, args.title, nameKey(args.title), args.target_date ?? null],
      () => loadGoal(ctx, ctx.entityId),
    );
    const fields = await goalFields(ctx, goal);
    return ok(
      `Goal ${quoted(goal.title)} created [ID: ${fields.goal_id}]${byPart(goal)}${await habitPart(ctx, goal.habit_id, goal.habit_name)}.`,
      fields,
      `To change or delete it later, pass goal_id="${fields.goal_id}".`,
    );
  },

  async update_goal(args, ctx) {
    const target = await ctx.refs.resolve('goal', args.goal_id, ctx.db);
    const habit = await resolveHabitLink(ctx, args.habit_id);
    await lockNames(ctx, 'goal');
    const goal = await loadGoal(ctx, target.id);
    if (args.title !== undefined) {
      const clash = await findSameName(ctx, 'goal', args.title, goal.id);
      if (clash) return nameTaken(ctx, 'goal', target, clash, 'titled');
    }
    const next: GoalRow = {
      ...goal,
      title: args.title ?? goal.title,
      target_date: args.target_date === undefined ? goal.target_date : args.target_date,
      habit_id: habit === undefined ? goal.habit_id : (habit?.id ?? null),
      habit_name: habit === undefined ? goal.habit_name : (habit?.label ?? null),
    };
    await ctx.db.query(
      `UPDATE goals SET title = $3, title_key = $4, target_date = $5, habit_id = $6, updated_at = NOW()
       WHERE id = $1 AND user_id = $2`,
      [goal.id, ctx.userId, next.title, nameKey(next.title), next.target_date, next.habit_id],
    );
    const renamed = next.title !== goal.title ? `, renamed from ${quoted(goal.title)}` : '';
    const fields = await goalFields(ctx, next);
    return ok(
      `Goal ${quoted(next.title)} updated [ID: ${fields.goal_id}]${renamed}${byPart(next)}${await habitPart(ctx, next.habit_id, next.habit_name)}.`,
      fields,
      `Its ref is still ${fields.goal_id}.`,
    );
  },

  async delete_goal(args, ctx) {
    const target = await ctx.refs.resolve('goal', args.goal_id, ctx.db);
    const goal = await loadGoal(ctx, target.id);
    await ctx.db.query('DELETE FROM goals WHERE id = $1 AND user_id = $2', [goal.id, ctx.userId]);
    return ok(
      `Goal ${quoted(goal.title)} deleted [ID: ${target.ref}].`,
      await goalFields(ctx, goal),
      `${target.ref} no longer exists; do not use it again.`,
    );
  },

  async list_goals(_args, ctx) {
    return listEntities(ctx, {
      entity: 'goal',
      columns: COLUMNS,
      rest: `${FROM} WHERE g.user_id = $1 ORDER BY g.target_date NULLS LAST, g.title_key`,
      params: [ctx.userId],
      none: { text: 'There are no goals yet.', hint: 'To add one, call create_goal.' },
      fields: fieldsOf,
      line: (goal: GoalRow) => ({ label: goal.title, ...(goal.target_date ? { details: `by ${goal.target_date}` } : {}) }),
      hint: 'To change one, pass its goal_id.',
    });
  },
};

function loadGoal(ctx: ToolContext, id: string): Promise<GoalRow> {
  return loadOwnRow<GoalRow>(ctx, 'goal', `SELECT ${COLUMNS} FROM ${FROM} WHERE g.id = $1 AND g.user_id = $2`, id);
}

async function goalFields(ctx: ToolContext, goal: GoalRow) {
  const habitRef = goal.habit_id ? await ctx.refs.refFor('habit', goal.habit_id) : undefined;
  return fieldsOf(goal, await ctx.refs.refFor('goal', goal.id), habitRef);
}

function fieldsOf(goal: GoalRow, ref: string, habitRef: string | undefined) {
  return {
    goal_id: ref,
    title: goal.title,
    ...(goal.target_date ? { target_date: goal.target_date } : {}),
    ...(habitRef ? { habit_id: habitRef } : {}),
  };
}

function byPart(goal: GoalRow): string {
  return goal.target_date ? `, to reach by ${goal.target_date}` : '';
}
