import type { QueryResultRow } from 'pg';
import { ENTITY_TABLES, fail, nameKey, quoted, type Entity, type ResolvedEntity, type ToolResult } from '@assistant/shared';
import type { ToolContext } from './handler';

export interface NamedRow {
  id: string;
  label: string;
}

/**
 * Serialises one user's creates and renames of one kind of entity: without it two parallel
 * save_habit("Yoga") calls could both pass the duplicate check before either commits.
 */
export async function lockNames(ctx: ToolContext, entity: Entity): Promise<void> {
  await ctx.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`${ENTITY_TABLES[entity].table}:${ctx.userId}`]);
}

/** Where names must differ: among one parent's children (folders) or one folder's documents, top level included. */
export interface NameScope {
  column: 'parent_id' | 'folder_id';
  id: string | null;
}

/** The user's entity with the same folded name/title (within `scope`, if given), other than exceptId. */
export async function findSameName(
  ctx: ToolContext,
  entity: Entity,
  name: string,
  exceptId: string,
  scope?: NameScope,
): Promise<NamedRow | undefined> {
  const { table, label, key } = ENTITY_TABLES[entity];
  const within = scope ? ` AND ${scope.column} IS NOT DISTINCT FROM $4::uuid` : '';
  const found = await ctx.db.query<NamedRow>(
    `SELECT id, ${label} AS label FROM ${table} WHERE user_id = $1 AND ${key} = $2 AND id <> $3${within} ORDER BY created_at LIMIT 1`,
    [ctx.userId, nameKey(name), exceptId, ...(scope ? [scope.id] : [])],
  );
  return found.rows[0];
}

/**
 * What a create checks first: the name lock, then another entity with the same name (as
 * findSameName), sent together on the tool's pipelined connection, one round trip for both.
 */
export async function lockedSameName(ctx: ToolContext, entity: Entity, name: string, scope?: NameScope): Promise<NamedRow | undefined> {
  const [, existing] = await Promise.all([lockNames(ctx, entity), findSameName(ctx, entity, name, ctx.entityId, scope)]);
  return existing;
}

/**
 * Inserts the row at the id reserved for the task (`ON CONFLICT (id) DO NOTHING`) and reads it
 * back in the same round trip. Read back rather than trusted: a retry after a crash answers for
 * its first attempt's row.
 */
export async function insertReserved<Row>(ctx: ToolContext, sql: string, values: unknown[], load: () => Promise<Row>): Promise<Row> {
  const [, row] = await Promise.all([ctx.db.query(sql, values), load()]);
  return row;
}

/** The answer to a create that would duplicate `existing`: point the model at the one there is. */
export async function alreadyExists(ctx: ToolContext, entity: Entity, existing: NamedRow, what: string): Promise<ToolResult> {
  const { noun } = ENTITY_TABLES[entity];
  const ref = await ctx.refs.refFor(entity, existing.id);
  return fail(`A ${noun} ${what} ${quoted(existing.label)} already exists [ID: ${ref}].`, `Use ${ref} instead of creating it again.`, {
    [`${noun}_id`]: ref,
  });
}

/**
 * The answer to a rename (or move) onto another entity's name: both refs, so the model can tell
 * them apart. `where` says where the clash is (` in that folder`), `advice` what to do instead.
 */
export async function nameTaken(
  ctx: ToolContext,
  entity: Entity,
  target: ResolvedEntity,
  clash: NamedRow,
  what: string,
  { where = '', advice = 'Choose a different one' }: { where?: string; advice?: string } = {},
): Promise<ToolResult> {
  const { noun } = ENTITY_TABLES[entity];
  const ref = await ctx.refs.refFor(entity, clash.id);
  return fail(
    `Another ${noun} ${what} ${quoted(clash.label)} already exists${where} [ID: ${ref}].`,
    `${advice}, or use ${ref} if that is the ${noun} you meant.`,
    { [`${noun}_id`]: target.ref, [`existing_${noun}_id`]: ref },
  );
}

/**
 * A `habit_id` argument of a create or update: undefined leaves the link as it is, null removes
 * it, anything else is resolved to the user's habit (or a ToolInputError listing candidates).
 */
export async function resolveHabitLink(ctx: ToolContext, value: string | null | undefined): Promise<ResolvedEntity | null | undefined> {
  if (value === undefined || value === null) return value;
  return ctx.refs.resolve('habit', value, ctx.db);
}

/** `, for habit "Meditação" [ID: habit_1]`, or nothing for an entity without a habit. */
export async function habitPart(ctx: ToolContext, habitId: string | null, habitName: string | null): Promise<string> {
  if (!habitId) return '';
  return `, for habit ${quoted(habitName ?? '')} [ID: ${await ctx.refs.refFor('habit', habitId)}]`;
}

export function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}

/** The user's row `id` of `entity` read by `sql` ($1 the id, $2 the user). */
export async function loadOwnRow<Row extends QueryResultRow>(ctx: ToolContext, entity: Entity, sql: string, id: string): Promise<Row> {
  const found = await ctx.db.query<Row>(sql, [id, ctx.userId]);
  // Not a model error: the row vanished under us (or the reserved id is taken); a retry sorts it out.
  if (!found.rows[0]) throw new Error(`${ENTITY_TABLES[entity].noun} row not found for this user`);
  return found.rows[0];
}
