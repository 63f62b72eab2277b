import type { Queryable } from '../db';
import { ENTITY_TABLES, isEntity, type Entity } from './entities';

/**
 * Refs (`document_3`) are the session's own (docs/tools.md): the next session numbers its
 * entities afresh, so a ref copied into MEMORY, which every later main session shows, would name
 * another entity there, or none, and the model told to use refs "exactly as shown" would change
 * the wrong row. What goes into the profile from a session therefore names things: a digest's
 * transcript and summary, and what `remember` and `update_profile` write, get each of the
 * session's refs replaced by its entity's name or title, and the `[ID: …]` markers dropped.
 */
export interface RefNames {
  /** Every ref of a built-in entity the session gave out, with its entity's name or title (null once deleted). */
  names: Map<string, string | null>;
}

const ENTITIES = Object.keys(ENTITY_TABLES) as Entity[];
const MARKER = new RegExp(`\\s*\\[ID: (?:${ENTITIES.join('|')})_\\d+\\]`, 'g');
const REF = new RegExp(`\\b(${ENTITIES.join('|')})_(\\d+)\\b`, 'g');

/** The names of the entities behind the session's refs of built-in entities. */
export async function sessionRefNames(db: Queryable, sessionId: string): Promise<RefNames> {
  const union = ENTITIES.map(
    (entity) =>
      `SELECT r.entity, r.n, e.${ENTITY_TABLES[entity].label}::text AS name
       FROM session_refs r LEFT JOIN ${ENTITY_TABLES[entity].table} e ON e.id = r.entity_id
       WHERE r.session_id = $1 AND r.entity = '${entity}'`,
  ).join(' UNION ALL ');
  const found = await db.query<{ entity: string; n: number; name: string | null }>(union, [sessionId]);
  return { names: new Map(found.rows.map((row) => [`${row.entity}_${row.n}`, row.name])) };
}

/**
 * `text` with the `[ID: <ref>]` markers gone and each of the session's refs replaced by its
 * entity's name ("a deleted document" when it no longer exists). Text that only looks like a ref
 * (a habit the user named "goal_2026") is not one of the session's and stays.
 */
export function nameRefs(text: string, { names }: RefNames): string {
  return text.replace(MARKER, '').replace(REF, (ref: string, entity: string, n: string) => {
    const name = names.get(`${entity}_${Number(n)}`);
    if (name === undefined || !isEntity(entity)) return ref;
    return name ?? `a deleted ${ENTITY_TABLES[entity].noun}`;
  });
}
