import { z } from 'zod';

/** Items one page of a list holds, unless `limit` asks for fewer or more (docs/api.md#pages). */
export const DEFAULT_PAGE_LIMIT = 1_000;
export const MAX_PAGE_LIMIT = 1_000;

export const pageLimit = z
  .string()
  .regex(/^[0-9]+$/, 'a whole number, in digits')
  .pipe(z.coerce.number<string>().int().min(1).max(MAX_PAGE_LIMIT))
  .optional()
  .meta({ description: `items per page, 1 to ${MAX_PAGE_LIMIT} (default ${DEFAULT_PAGE_LIMIT})` });

export interface Page<T> {
  rows: T[];
  /** The cursor of the page after this one, when there is one. */
  next?: string;
}

/**
 * The Link header naming the next page (RFC 8288), as GitHub's API gives one: the request's own
 * query (its filters and `limit`) with the cursor of the next page.
 */
export function nextPageLink(path: string, query: Record<string, string | number | undefined>): string {
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  return `<${path}?${params.toString()}>; rel="next"`;
}
