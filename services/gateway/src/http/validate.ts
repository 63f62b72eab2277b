import { z } from 'zod';
import { HttpError } from './errors';

/** Parses a request part; a failure answers 400 with the zod issues in `details`. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw new HttpError(400, 'validation_failed', 'the request is not valid', result.error.issues);
  return result.data;
}

// UUIDs are case-insensitive, but Redis keys (a turn's event stream) and comparisons in code are not:
// every route sees the lower-case form that PostgreSQL answers with.
export const uuidParam = z.uuid().transform((id) => id.toLowerCase());
