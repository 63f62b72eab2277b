import { z } from 'zod';
import { defineTool, displayName, entityReference, quote } from './tool-spec';

// The user's own words, stored and shown as they are: nothing schedules by it (reminders have `repeat`).
const frequency = displayName(100, 'How often, in a few words: daily, weekdays, weekly, "3 times a week" and the like.');
const description = z.string().trim().max(2_000, 'must be at most 2000 characters').describe('A short note about the habit.');

export const habitTools = {
  save_habit: defineTool({
    description:
      "Save a new habit the user wants to keep, like meditating or reading. Check list_habits first if it may already exist. The result gives the habit's ref (e.g. habit_1); use that ref for reminders and goals about it.",
    input: z.object({
      name: displayName(100, 'The habit name, 1 to 100 characters.'),
      frequency: frequency.optional(),
      description: description.optional(),
    }),
    mutates: true,
    describe: (a) => `Save habit ${quote(a.name)}${a.frequency ? ` (${a.frequency})` : ''}`,
  }),
  update_habit: defineTool({
    description:
      'Change an existing habit: rename it, or set its frequency or description. Pass only the fields to change; null clears frequency or description.',
    input: z
      .object({
        habit_id: entityReference('habit'),
        name: displayName(100, 'The new name, 1 to 100 characters.').optional(),
        frequency: frequency.nullable().optional(),
        description: description.nullable().optional(),
      })
      .refine((a) => a.name !== undefined || a.frequency !== undefined || a.description !== undefined, {
        error: 'give at least one of name, frequency or description to change',
      }),
    mutates: true,
    describe: (a) => `Update habit ${quote(a.habit_id)}${a.name ? ` to ${quote(a.name)}` : ''}`,
  }),
  delete_habit: defineTool({
    description: 'Delete a habit. Its reminders and goals stay, no longer linked to it.',
    input: z.object({ habit_id: entityReference('habit') }),
    mutates: true,
    describe: (a) => `Delete habit ${quote(a.habit_id)}`,
  }),
  list_habits: defineTool({
    description: "List the user's habits with their refs, frequency and description.",
    input: z.object({}),
    mutates: false,
    describe: () => 'List habits',
  }),
};
