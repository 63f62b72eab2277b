import { z } from 'zod';

/** One tool as the model sees it and as the tool worker runs it. */
export interface ToolSpec<I extends z.ZodObject = z.ZodObject> {
  /** Written for the model: what the tool does and when to use it. */
  description: string;
  input: I;
  /** Tools that change data wait for the user's approval in manual mode. */
  mutates: boolean;
  /** Overrides TOOL_TIMEOUT_MS for this tool. */
  timeoutMs?: number;
  /** One line for the task list and the approval request: `Create folder "Work"`. */
  describe(args: z.infer<I>, context: DescribeContext): string;
}

/** What a task's line may need beyond the arguments: the user's zone, to show a time as they read it. */
export interface DescribeContext {
  timeZone: string;
}

export function defineTool<I extends z.ZodObject>(spec: ToolSpec<I>): ToolSpec<I> {
  return spec;
}

/**
 * A call's arguments checked by the tool's schema. Models often send null for an optional argument
 * they mean to leave out: it counts as left out, unless the argument takes null itself (the
 * update_* tools clear a field with it). They send an empty string so too: a call that does not
 * fit is checked again without its blank optional arguments, and taken if it fits then. A `new_`
 * name stands for the field (renamedArgument).
 */
export function parseToolArgs<I extends z.ZodObject>(spec: ToolSpec<I>, args: Record<string, unknown>) {
  const shape: z.core.$ZodShape = spec.input.shape;
  const given = Object.entries(args)
    .map(([key, value]): [string, unknown] => [renamedArgument(shape, args, key), value])
    .filter(([key, value]) => value !== null || !leftOut(shape[key], null));
  const parsed = spec.input.safeParse(Object.fromEntries(given));
  if (parsed.success) return parsed;
  const unblanked = given.filter(([key, value]) => !(typeof value === 'string' && value.trim() === '' && leftOut(shape[key], value)));
  if (unblanked.length === given.length) return parsed;
  const retried = spec.input.safeParse(Object.fromEntries(unblanked));
  return retried.success ? retried : parsed;
}

/**
 * `new_name` (`new_title`, `new_text`) is read as `name` where the tool takes `name` and no
 * `new_name`, and `name` was not given too: the update_* tools call their fields as they are,
 * and models carry the rename tools' `new_` names over to them.
 */
function renamedArgument(shape: z.core.$ZodShape, args: Record<string, unknown>, key: string): string {
  if (!key.startsWith('new_') || Object.hasOwn(shape, key)) return key;
  const field = key.slice('new_'.length);
  return Object.hasOwn(shape, field) && !Object.hasOwn(args, field) ? field : key;
}

/** Whether `value` stands for an optional argument left out: one that does not take it. */
function leftOut(argument: z.core.$ZodType | undefined, value: unknown): boolean {
  return argument !== undefined && z.safeParse(argument, undefined).success && !z.safeParse(argument, value).success;
}

/** The longest name, title or text an entity may have (a reminder's text), so each can be found by it. */
const MAX_REFERENCE = 500;

/** A ref (`folder_1`) or a name/title; UUIDs are refused by the resolver with a hint. */
export function entityReference(entity: string, what = 'name') {
  return z
    .string()
    .trim()
    .min(1, `${entity}_id must not be empty`)
    .max(MAX_REFERENCE)
    .describe(`The ${entity}'s ref exactly as shown in earlier results (e.g. "${entity}_1"), or its ${what}.`);
}

/**
 * What shows nothing: whitespace, format characters (zero-width space and joiners, soft hyphen,
 * direction marks) and the blank fillers (Braille blank, Hangul fillers) JavaScript's trim keeps.
 */
const INVISIBLE = /[\s\p{Cf}\p{Cc}\u2800\u115F\u1160\u3164\uFFA0]/gu;

/**
 * A required display name: trimmed, not blank, at most `max` characters (docs/tools.md#validation).
 * Composed (NFC) first, so an accented letter typed as a letter and a combining accent, as some
 * keyboards send it, counts and is stored as the one character the user sees.
 */
export function displayName(max: number, description: string) {
  return z
    .string()
    .trim()
    .normalize('NFC')
    .min(1, { error: 'must not be blank', abort: true })
    .refine((text) => text.replace(INVISIBLE, '') !== '', 'must not be blank')
    .max(max, `must be at most ${max} characters`)
    .describe(description);
}

/** `Create folder "Work"`: quoted, shortened values for task descriptions. */
export function quote(value: string | undefined): string {
  const text = value ?? '';
  return `"${text.length > 60 ? `${text.slice(0, 57)}...` : text}"`;
}
