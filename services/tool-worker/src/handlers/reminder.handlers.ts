import {
  fail,
  firstFiring,
  formatLocal,
  isoInZone,
  nameKey,
  ok,
  parseLocalDateTime,
  quoted,
  reminderCancelJob,
  reminderFireJob,
  reminderWallClock,
  userTimeZone,
  wallClockText,
  type ReminderRepeat,
  type ToolResult,
  type WallClock,
} from '@assistant/shared';
import type { ToolContext, ToolHandlers } from './handler';
import { listEntities } from './entity-list';
import { habitPart, loadOwnRow, lockNames, resolveHabitLink } from './entity-support';

interface ReminderRow {
  id: string;
  text: string;
  at: Date;
  repeat: ReminderRepeat | null;
  /** The wall-clock time it was set for, in the user's zone (`timestamp` text). */
  local_at: string | null;
  habit_id: string | null;
  habit_name: string | null;
  last_fired_at: Date | null;
  /** That firing was skipped: the user was disabled, nothing reached them. */
  last_fire_skipped: boolean;
}

/** A time up to this far in the past (the model took a while to answer) still counts: it fires at once. */
const PAST_GRACE_MS = 60_000;
/** The last instant with a four-digit year: a fire job carries its time as ISO 8601 text, which has none after it. */
const LATEST_AT = Date.parse('9999-12-31T23:59:59.999Z');

const COLUMNS =
  'r.id, r.text, r.at, r.repeat, r.local_at::text AS local_at, r.habit_id, h.name AS habit_name, r.last_fired_at, r.last_fire_skipped';
const FROM = 'reminders r LEFT JOIN habits h ON h.id = r.habit_id AND h.user_id = r.user_id';

export const reminderHandlers: Pick<ToolHandlers, 'create_reminder' | 'update_reminder' | 'delete_reminder' | 'list_reminders'> = {
  async create_reminder(args, ctx) {
    const habit = await resolveHabitLink(ctx, args.habit_id);
    const zone = await userTimeZone(ctx.db, ctx.userId, true);
    const when = parseLocalDateTime(args.at, zone);
    if (!when) return badTime(args.at);
    if (isPast(when.instant)) return pastTime(args.at, zone);
    const at = firstFiring(args.repeat ?? null, when.wall, when.instant, zone, new Date());
    if (at.getTime() > LATEST_AT) return tooLate(args.at);
    await lockNames(ctx, 'reminder');
    const existing = await findSameReminder(ctx, args.text, at, ctx.entityId);
    if (existing) {
      const ref = await ctx.refs.refFor('reminder', existing);
      return fail(`The same reminder at the same time already exists [ID: ${ref}].`, `Use ${ref} instead of creating it again.`, {
        reminder_id: ref,
      });
    }
    await ctx.db.query(
      `INSERT INTO reminders (id, user_id, habit_id, text, text_key, at, repeat, local_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
       ON CONFLICT (id) DO NOTHING`,
      [ctx.entityId, ctx.userId, habit?.id ?? null, args.text, nameKey(args.text), at, args.repeat ?? null, wallClockText(when.wall)],
    );
    // Read back rather than trust the insert: a retry after a crash answers for its first attempt's row.
    const reminder = await loadReminder(ctx, ctx.entityId);
    ctx.afterCommit(reminderFireJob(reminder.id, reminder.at));
    const fields = await reminderFields(ctx, reminder, zone);
    return ok(
      `Reminder ${quoted(reminder.text)} set for ${fields.at_local} [ID: ${fields.reminder_id}]${repeatPart(reminder)}${await habitPart(ctx, reminder.habit_id, reminder.habit_name)}.`,
      fields,
      `To change or cancel it, pass reminder_id="${fields.reminder_id}" to update_reminder or delete_reminder.`,
    );
  },

  async update_reminder(args, ctx) {
    const target = await ctx.refs.resolve('reminder', args.reminder_id, ctx.db);
    const habit = await resolveHabitLink(ctx, args.habit_id);
    const zone = await userTimeZone(ctx.db, ctx.userId, true);
    const when = args.at !== undefined ? parseLocalDateTime(args.at, zone) : undefined;
    if (args.at !== undefined && !when) return badTime(args.at);
    if (when && isPast(when.instant)) return pastTime(args.at as string, zone);
    await lockNames(ctx, 'reminder');
    const reminder = await loadReminder(ctx, target.id);
    const repeat = args.repeat === undefined ? reminder.repeat : args.repeat;
    const next: ReminderRow = {
      ...reminder,
      text: args.text ?? reminder.text,
      ...timing(reminder, repeat, when, zone),
      repeat,
      habit_id: habit === undefined ? reminder.habit_id : (habit?.id ?? null),
      habit_name: habit === undefined ? reminder.habit_name : (habit?.label ?? null),
    };
    if (next.at.getTime() > LATEST_AT) return tooLate(args.at ?? formatLocal(next.at, zone));
    const clash = await findSameReminder(ctx, next.text, next.at, reminder.id);
    if (clash) {
      const ref = await ctx.refs.refFor('reminder', clash);
      return fail(
        `Another reminder with that text at that time already exists [ID: ${ref}].`,
        `Change the text or the time, or use ${ref} if that is the reminder you meant.`,
        { reminder_id: target.ref, existing_reminder_id: ref },
      );
    }
    await ctx.db.query(
      `UPDATE reminders SET text = $3, text_key = $4, at = $5, repeat = $6, habit_id = $7, local_at = $8, updated_at = NOW()
       WHERE id = $1 AND user_id = $2`,
      [reminder.id, ctx.userId, next.text, nameKey(next.text), next.at, next.repeat, next.habit_id, next.local_at],
    );
    if (next.at.getTime() !== reminder.at.getTime()) {
      // The old job would find `at` changed and do nothing; removing it just keeps the queue tidy.
      ctx.afterCommit(reminderCancelJob(reminder.id, reminder.at));
      ctx.afterCommit(reminderFireJob(reminder.id, next.at));
    }
    const fields = await reminderFields(ctx, next, zone);
    return ok(
      `Reminder ${quoted(next.text)} updated [ID: ${fields.reminder_id}]: ${whenPart(next, zone)}${repeatPart(next)}${await habitPart(ctx, next.habit_id, next.habit_name)}.`,
      fields,
      `Its ref is still ${fields.reminder_id}.`,
    );
  },

  async delete_reminder(args, ctx) {
    const target = await ctx.refs.resolve('reminder', args.reminder_id, ctx.db);
    const zone = await userTimeZone(ctx.db, ctx.userId);
    const reminder = await loadReminder(ctx, target.id);
    await ctx.db.query('DELETE FROM reminders WHERE id = $1 AND user_id = $2', [reminder.id, ctx.userId]);
    // Its job, if already due, finds no reminder and does nothing: a deleted reminder never fires.
    ctx.afterCommit(reminderCancelJob(reminder.id, reminder.at));
    return ok(
      `Reminder ${quoted(reminder.text)} deleted [ID: ${target.ref}]; it will not fire.`,
      await reminderFields(ctx, reminder, zone),
      `${target.ref} no longer exists; do not use it again.`,
    );
  },

  async list_reminders(_args, ctx) {
    const zone = await userTimeZone(ctx.db, ctx.userId);
    return listEntities(ctx, {
      entity: 'reminder',
      columns: COLUMNS,
      rest: `${FROM} WHERE r.user_id = $1 ORDER BY r.at, r.text_key`,
      params: [ctx.userId],
      none: { text: 'There are no reminders.', hint: 'To set one, call create_reminder.' },
      note: `, soonest first (times in ${zone})`,
      fields: (row: ReminderRow, ref, habitRef) => fieldsOf(row, zone, ref, habitRef),
      line: (row: ReminderRow) => ({ label: row.text, details: `${whenPart(row, zone)}${repeatPart(row)}` }),
      hint: 'To change or cancel one, pass its reminder_id.',
    });
  },
};

function isPast(at: Date): boolean {
  return at.getTime() < Date.now() - PAST_GRACE_MS;
}

function pastTime(at: string, zone: string): ToolResult {
  return fail(`The time ${at} is in the past.`, `It is now ${formatLocal(new Date(), zone)}; pass a time in the future.`);
}

function tooLate(at: string): ToolResult {
  return fail(`The time ${at} is too far in the future.`, 'Pass a time before the year 10000.');
}

function badTime(at: string): ToolResult {
  return fail(`The time ${at} is not a date and time that exists.`, 'Pass an ISO 8601 date-time like 2026-05-01T07:00:00.');
}

/**
 * `at` and `local_at` after an update: a new time is the new wall-clock anchor; a new repetition
 * of an unchanged time keeps the anchor and starts at its next occurrence from now.
 */
function timing(
  reminder: ReminderRow,
  repeat: ReminderRepeat | null,
  when: { instant: Date; wall: WallClock } | undefined,
  zone: string,
): Pick<ReminderRow, 'at' | 'local_at'> {
  const wall = when?.wall ?? reminderWallClock(reminder, zone);
  const instant = when?.instant ?? reminder.at;
  if (!when && repeat === reminder.repeat) return { at: reminder.at, local_at: reminder.local_at };
  return { at: firstFiring(repeat, wall, instant, zone, new Date()), local_at: wallClockText(wall) };
}

/** A reminder of the user with the same folded text at the same time, other than exceptId. */
async function findSameReminder(ctx: ToolContext, text: string, at: Date, exceptId: string): Promise<string | undefined> {
  const found = await ctx.db.query<{ id: string }>(
    'SELECT id FROM reminders WHERE user_id = $1 AND text_key = $2 AND at = $3 AND id <> $4 LIMIT 1',
    [ctx.userId, nameKey(text), at, exceptId],
  );
  return found.rows[0]?.id;
}

/** Locks the row: a firing that moves `at` and an update of `at` must not interleave. */
function loadReminder(ctx: ToolContext, id: string): Promise<ReminderRow> {
  return loadOwnRow<ReminderRow>(ctx, 'reminder', `SELECT ${COLUMNS} FROM ${FROM} WHERE r.id = $1 AND r.user_id = $2 FOR UPDATE OF r`, id);
}

async function reminderFields(ctx: ToolContext, reminder: ReminderRow, zone: string) {
  const habitRef = reminder.habit_id ? await ctx.refs.refFor('habit', reminder.habit_id) : undefined;
  return fieldsOf(reminder, zone, await ctx.refs.refFor('reminder', reminder.id), habitRef);
}

/** `at` in the user's zone, as ISO 8601 the model can pass back, and as the user reads it (docs/tools.md#times). */
function fieldsOf(reminder: ReminderRow, zone: string, ref: string, habitRef: string | undefined) {
  return {
    reminder_id: ref,
    text: reminder.text,
    at: isoInZone(reminder.at, zone),
    at_local: formatLocal(reminder.at, zone),
    ...(reminder.repeat ? { repeat: reminder.repeat } : {}),
    ...(habitRef ? { habit_id: habitRef } : {}),
    ...(reminder.last_fired_at ? { last_fired_at: isoInZone(reminder.last_fired_at, zone) } : {}),
  };
}

/**
 * A one-off reminder keeps its `at` after firing; say so rather than announce a time gone by, and
 * that it never reached the user when it came due while an admin had them disabled.
 */
function whenPart(reminder: Pick<ReminderRow, 'at' | 'repeat' | 'last_fired_at' | 'last_fire_skipped'>, zone: string): string {
  const fired = !reminder.repeat && reminder.last_fired_at !== null && reminder.last_fired_at >= reminder.at;
  const at = formatLocal(reminder.at, zone);
  if (!fired) return `fires at ${at}`;
  const what = reminder.last_fire_skipped ? `skipped at ${at}, the account being disabled then` : `fired at ${at}`;
  return `${what} (give it a new time to fire again)`;
}

function repeatPart(reminder: Pick<ReminderRow, 'repeat'>): string {
  return reminder.repeat ? `, repeating ${reminder.repeat}` : '';
}
