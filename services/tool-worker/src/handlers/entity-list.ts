import { ENTITY_TABLES, ok, quoted, type Entity, type ToolResult } from '@assistant/shared';
import type { ToolContext } from './handler';

/** Longest list a list_* tool returns: a result must fit in the model's context. */
export const LIST_LIMIT = 100;

export interface ListedRows<Row> {
  rows: Row[];
  /** Entity id → ref, for every row. */
  refs: Map<string, string>;
  /** How many rows there are in all, beyond LIST_LIMIT too. */
  total: number;
}

/**
 * The first LIST_LIMIT rows of `SELECT <columns> FROM <rest>` with their refs and the total.
 * `rest` holds the FROM, WHERE and ORDER BY; the total and the limit are added here.
 */
export async function listRows<Row extends { id: string }>(
  ctx: ToolContext,
  entity: Entity,
  columns: string,
  rest: string,
  params: unknown[],
): Promise<ListedRows<Row>> {
  const found = await ctx.db.query<Row & { total: number }>(
    `SELECT ${columns}, count(*) OVER ()::int AS total FROM ${rest} LIMIT ${LIST_LIMIT}`,
    params,
  );
  const refs = await ctx.refs.refsFor(
    entity,
    found.rows.map((row) => row.id),
  );
  return { rows: found.rows, refs, total: found.rows[0]?.total ?? 0 };
}

/** `- "Name" [ID: ref] details` lines, with a note when the list was cut at LIST_LIMIT. */
export function listLines(items: { ref: string; label: string; details?: string }[], total: number, noun: string): string[] {
  const lines = items.map((item) => `- ${quoted(item.label)} [ID: ${item.ref}]${item.details ? ` ${item.details}` : ''}`);
  const hidden = total - items.length;
  return hidden > 0 ? [...lines, `- … and ${hidden} more ${noun}`] : lines;
}

/** What a list_* tool lists and how it words the answer. */
export interface EntityList<Row extends { id: string; habit_id?: string | null }, Fields> {
  entity: 'goal' | 'habit' | 'reminder';
  columns: string;
  /** FROM, WHERE (the user is $1) and ORDER BY. */
  rest: string;
  params: unknown[];
  /** The text and the hint when there is nothing to list. */
  none: { text: string; hint: string };
  /** Said after the count in the first line, e.g. how the list is ordered. */
  note?: string;
  fields(row: Row, ref: string, habitRef: string | undefined): Fields;
  line(row: Row): { label: string; details?: string };
  hint: string;
}

/** The whole flow of a list_* tool: the rows, their refs and their linked habits' refs, the lines and the fields. */
export async function listEntities<Row extends { id: string; habit_id?: string | null }, Fields>(
  ctx: ToolContext,
  list: EntityList<Row, Fields>,
): Promise<ToolResult> {
  const { noun } = ENTITY_TABLES[list.entity];
  const nouns = `${noun}s`;
  const { rows, refs, total } = await listRows<Row>(ctx, list.entity, list.columns, list.rest, list.params);
  if (rows.length === 0) return ok(list.none.text, { [nouns]: [] }, list.none.hint);
  const habitRefs = await ctx.refs.refsFor(
    'habit',
    rows.flatMap((row) => (row.habit_id ? [row.habit_id] : [])),
  );
  const ref = (row: Row) => refs.get(row.id) as string;
  const items = rows.map((row) => list.fields(row, ref(row), row.habit_id ? habitRefs.get(row.habit_id) : undefined));
  const lines = listLines(
    rows.map((row) => ({ ref: ref(row), ...list.line(row) })),
    total,
    nouns,
  );
  const count = total === 1 ? `is 1 ${noun}` : `are ${total} ${nouns}`;
  return ok([`There ${count}${list.note ?? ''}:`, ...lines].join('\n'), { [nouns]: items }, list.hint);
}
