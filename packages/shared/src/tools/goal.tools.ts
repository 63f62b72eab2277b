import { z } from 'zod';
import { defineTool, displayName, entityReference, quote } from './tool-spec';

const DATE_ERROR = 'must be a date like 2026-12-31';
// ISO 8601 has a year 0000, PostgreSQL's dates do not: refused here rather than failing the call.
const targetDate = z.iso
  .date({ error: DATE_ERROR })
  .refine((date) => !date.startsWith('0000'), { error: DATE_ERROR })
  .describe('The date to reach the goal by, as YYYY-MM-DD.');

export const goalTools = {
  create_goal: defineTool({
    description:
      "Create a goal the user wants to reach, optionally by a date and linked to a habit that leads to it. The result gives the goal's ref (e.g. goal_1).",
    input: z.object({
      title: displayName(255, 'The goal, 1 to 255 characters.'),
      target_date: targetDate.optional(),
      habit_id: entityReference('habit').optional(),
    }),
    mutates: true,
    describe: (a) => `Create goal ${quote(a.title)}${a.target_date ? ` by ${a.target_date}` : ''}`,
  }),
  update_goal: defineTool({
    description:
      'Change a goal: its title, target date or habit. Pass only the fields to change; null clears the target date or unlinks the habit.',
    input: z
      .object({
        goal_id: entityReference('goal', 'title'),
        title: displayName(255, 'The new title, 1 to 255 characters.').optional(),
        target_date: targetDate.nullable().optional(),
        habit_id: entityReference('habit').nullable().optional(),
      })
      .refine((a) => a.title !== undefined || a.target_date !== undefined || a.habit_id !== undefined, {
        error: 'give at least one of title, target_date or habit_id to change',
      }),
    mutates: true,
    describe: (a) => `Update goal ${quote(a.goal_id)}${a.title ? ` to ${quote(a.title)}` : ''}`,
  }),
  delete_goal: defineTool({
    description: 'Delete a goal.',
    input: z.object({ goal_id: entityReference('goal', 'title') }),
    mutates: true,
    describe: (a) => `Delete goal ${quote(a.goal_id)}`,
  }),
  list_goals: defineTool({
    description: "List the user's goals with their refs, target dates and habits.",
    input: z.object({}),
    mutates: false,
    describe: () => 'List goals',
  }),
};
