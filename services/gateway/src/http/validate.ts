import { z } from 'zod';
import { HttpError } from './errors';

/** Parses a request part; a failure answers 400 with the zod issues in `details`. */
export function parse<S extends z.ZodType>(schema: S, value: unknown): z.output<S> {
  const result = schema.safeParse(value ?? {});
  if (!result.success) throw new HttpError(400, 'validation_failed', 'the request is not valid', result.error.issues);
  return result.data;
}

export const uuidParam = z.uuid();

/** Ids in paths that are not UUIDs name nothing: 404, like an unknown id. */
export function idParam(value: unknown, what: string): string {
  const result = uuidParam.safeParse(value);
  if (!result.success) throw new HttpError(404, 'not_found', `${what} not found`);
  return result.data;
}
