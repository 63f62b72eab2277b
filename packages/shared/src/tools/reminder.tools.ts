import { z } from 'zod';
import { formatLocal, normalizeDateTime, parseLocalDateTime } from '../time/local-time';
import { REMINDER_REPEATS } from '../time/repeat-schedule';
import { defineTool, displayName, entityReference, quote } from './tool-spec';

const text = (what: string) => displayName(500, `${what}, 1 to 500 characters; it is what the user will read.`);
// Other spellings of the same date-time are rewritten first; the model is still offered the strict form.
const at = z.preprocess(
  (value) => (typeof value === 'string' ? normalizeDateTime(value) : value),
  z.iso
    .datetime({
      offset: true,
      local: true,
      error: "must be an ISO 8601 date-time, like 2026-05-01T07:00:00 (the user's local time) or 2026-05-01T07:00:00-03:00",
    })
    .describe(
      'When it fires: an ISO 8601 date-time. Without an offset ("2026-05-01T07:00:00") it is the user\'s local time, in their time zone; with one ("2026-05-01T07:00:00-03:00") it is that instant. Must be in the future.',
    ),
);
/**
 * `at` as the user reads it, `2026-11-23 09:00 (America/Sao_Paulo)`, whether the model gave it
 * with an offset or without: the user approving the call sees when it fires on their clock.
 */
function localTime(at: string, zone: string): string {
  const when = parseLocalDateTime(at, zone);
  return when ? formatLocal(when.instant, zone) : at;
}

// In any case: models write "Daily" as readily as "daily".
const repeat = z
  .preprocess((value) => (typeof value === 'string' ? value.trim().toLowerCase() : value), z.enum(REMINDER_REPEATS))
  .describe(
    "Repeat from `at` in the user's time zone, keeping its local time of day: daily, weekdays (Monday to Friday), weekly or monthly.",
  );

export const reminderTools = {
  create_reminder: defineTool({
    description:
      "Set a reminder: at the given time its text is sent to the user. Optionally repeating (daily, weekdays, weekly, monthly), and linked to a habit. The result gives the reminder's ref (e.g. reminder_1).",
    input: z.object({
      text: text('What to remind the user of'),
      at,
      habit_id: entityReference('habit').optional(),
      repeat: repeat.optional(),
    }),
    mutates: true,
    describe: (a, { timeZone }) => `Create reminder ${quote(a.text)} at ${localTime(a.at, timeZone)}${a.repeat ? `, ${a.repeat}` : ''}`,
  }),
  update_reminder: defineTool({
    description:
      'Change a reminder: its text, time, repetition or habit. Pass only the fields to change; null for repeat makes it fire once, null for habit_id unlinks it.',
    input: z
      .object({
        reminder_id: entityReference('reminder', 'text'),
        text: text('The new text').optional(),
        at: at.optional(),
        repeat: repeat.nullable().optional(),
        habit_id: entityReference('habit').nullable().optional(),
      })
      .refine((a) => a.text !== undefined || a.at !== undefined || a.repeat !== undefined || a.habit_id !== undefined, {
        error: 'give at least one of text, at, repeat or habit_id to change',
      }),
    mutates: true,
    describe: (a, { timeZone }) => `Update reminder ${quote(a.reminder_id)}${a.at ? ` to ${localTime(a.at, timeZone)}` : ''}`,
  }),
  delete_reminder: defineTool({
    description: 'Delete a reminder; it will not fire again.',
    input: z.object({ reminder_id: entityReference('reminder', 'text') }),
    mutates: true,
    describe: (a) => `Delete reminder ${quote(a.reminder_id)}`,
  }),
  list_reminders: defineTool({
    description: "List the user's reminders with their refs, next time, repetition and habit, soonest first.",
    input: z.object({}),
    mutates: false,
    describe: () => 'List reminders',
  }),
};
