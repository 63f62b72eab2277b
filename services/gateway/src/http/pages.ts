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

/**
 * The cursor of a list ordered by a time, ties by id: the last item's time in microseconds since
 * the epoch and its id. It holds its own place, so it still pages on once its item has changed
 * or is gone.
 */
export const timeIdCursor = z
  .string()
  .regex(/^[0-9]{1,20}_[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/, 'a cursor from a Link header');

/**
 * For a list ordered by `time` then `id` (`past` is `<` newest first, `>` oldest first): SQL of
 * each row's cursor, SQL keeping the rows past `cursor`, and its two parameters `$n` and `$n+1`
 * (without a cursor, every row is kept).
 */
export function timeIdPage(
  order: { time: string; id: string; past: '<' | '>' },
  cursor: string | undefined,
  n: number,
): { cursorSql: string; pastSql: string; params: [string | null, string | null] } {
  const [micros, id] = cursor ? cursor.split('_') : [];
  const place = `(TIMESTAMPTZ 'epoch' + $${n}::bigint * INTERVAL '1 microsecond', $${n + 1}::uuid)`;
  return {
    cursorSql: `(EXTRACT(EPOCH FROM ${order.time}) * 1000000)::bigint::text || '_' || ${order.id}`,
    pastSql: `($${n}::bigint IS NULL OR (${order.time}, ${order.id}) ${order.past} ${place})`,
    params: [micros ?? null, id ?? null],
  };
}

/** The first `limit` rows of `limit + 1` fetched, without their cursors, and the next page's cursor when there is one more. */
export function pageOf<T extends { cursor: string }>(found: T[], limit: number): Page<Omit<T, 'cursor'>> {
  const rows = found.slice(0, limit);
  const next = found.length > limit ? rows.at(-1)?.cursor : undefined;
  return { rows: rows.map(({ cursor: _cursor, ...row }) => row), ...(next ? { next } : {}) };
}

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
