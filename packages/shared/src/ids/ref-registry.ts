import { UNFLUSHED_COMMIT, type Queryable } from '../db';
import { userTimeZone } from '../reminders/reminder-times';
import { nameKey, namesByUuid, quoted } from '../text';
import { formatLocal } from '../time/local-time';
import { ToolInputError, type Candidate } from '../tools/tool-result';
import { ENTITY_TABLES, isEntity, type Entity } from './entities';

const REF_PATTERN = /^([a-z]+)_(\d+)$/;
/** A ref as results show it, `[ID: habit_1]`, alone or after the name (`"Yoga" [ID: habit_1]`), as models copy it. */
const MARKED_REF = /^.*?\[ID:\s*([a-z]+_\d+)\s*\]$/is;
const MAX_CANDIDATES = 10;
/** The column naming the folder an entity sits in, for the kinds that sit in folders. */
const FOLDER_COLUMNS: Partial<Record<Entity, 'parent_id' | 'folder_id'>> = { folder: 'parent_id', document: 'folder_id' };
/** `session_refs.n` is an INTEGER: a ref numbered past it was never given, and must not reach a query. */
const MAX_REF_NUMBER = 2_147_483_647;

export interface ResolvedEntity {
  id: string;
  ref: string;
  label: string;
}

/**
 * The one boundary between UUIDs and the model (docs/tools.md#refs: refs stable for the session):
 * the model only ever sees `<entity>_<n>`, and every `*_id` argument comes back through here.
 *
 * Refs are written outside the tool's transaction on purpose: a ref for a row that a rolled-back
 * attempt would have created stays valid for the retry, which reuses the same reserved id.
 */
export class RefRegistry {
  constructor(
    private readonly db: Queryable,
    readonly sessionId: string,
    readonly userId: string,
  ) {}

  async refFor(entity: Entity, id: string): Promise<string> {
    const refs = await this.refsFor(entity, [id]);
    return refs.get(id) as string;
  }

  /** Refs for many ids at once, numbering the new ones from the session's atomic counter. */
  async refsFor(entity: Entity, ids: string[]): Promise<Map<string, string>> {
    return this.refsIn(entity, ids);
  }

  /**
   * Refs `<namespace>_<n>` in any namespace: an entity kind, or an MCP server's name for the
   * UUIDs its results hold (docs/tools.md#mcp-tools); the same counters, so the same guarantees.
   */
  async refsIn(entity: string, ids: string[]): Promise<Map<string, string>> {
    // By each id's lowercase form, the refs' keys: the same UUID in capitals is the same id, and
    // a new ref keeps how it was first written (`written_as`), which idsIn gives back.
    const written = new Map<string, string>();
    for (const id of ids) if (!written.has(id.toLowerCase())) written.set(id.toLowerCase(), id);
    const unique = [...written.keys()];
    const refs = new Map<string, string>();
    if (unique.length === 0) return refs;
    // One statement: the refs that exist, and new ones for the rest, numbered in the order
    // given from the session's counter. Unflushed: what names a new ref outlives a database
    // crash only once a later statement stores it (the tool's completion, the model step), and
    // that statement's flush covers this one.
    const found = await this.db.query<{ entity_id: string; n: number }>(
      `WITH wanted AS (
           SELECT text::uuid AS id, NULLIF(text, lower(text)) AS written_as, ord
           FROM unnest($3::text[]) WITH ORDINALITY AS t(text, ord) WHERE ${UNFLUSHED_COMMIT}),
         existing AS (SELECT entity_id, n FROM session_refs WHERE session_id = $1 AND entity = $2 AND entity_id IN (SELECT id FROM wanted)),
         missing AS (SELECT id, written_as, row_number() OVER (ORDER BY ord) AS i FROM wanted WHERE id NOT IN (SELECT entity_id FROM existing)),
         counter AS (
           INSERT INTO session_ref_counters (session_id, entity, last_n) SELECT $1, $2, COUNT(*) FROM missing HAVING COUNT(*) > 0
           ON CONFLICT (session_id, entity) DO UPDATE SET last_n = session_ref_counters.last_n + EXCLUDED.last_n
           RETURNING last_n),
         inserted AS (
           INSERT INTO session_refs (session_id, entity, n, entity_id, written_as)
           SELECT $1, $2, counter.last_n - (SELECT COUNT(*) FROM missing) + missing.i, missing.id, missing.written_as FROM missing, counter
           ON CONFLICT (session_id, entity, entity_id) DO NOTHING RETURNING entity_id, n)
       SELECT entity_id, n FROM existing UNION ALL SELECT entity_id, n FROM inserted`,
      [this.sessionId, entity, [...written.values()]],
    );
    for (const row of found.rows) refs.set(row.entity_id, `${entity}_${row.n}`);
    const raced = unique.filter((id) => !refs.has(id));
    if (raced.length === 0) return refs;
    // Another call registered some of them meanwhile (after this statement's snapshot): read what won.
    const stored = await this.db.query<{ entity_id: string; n: number }>(
      'SELECT entity_id, n FROM session_refs WHERE session_id = $1 AND entity = $2 AND entity_id = ANY($3::uuid[])',
      [this.sessionId, entity, raced],
    );
    for (const row of stored.rows) refs.set(row.entity_id, `${entity}_${row.n}`);
    return refs;
  }

  /** The UUIDs behind `<namespace>_<n>` refs of this session, as first written, by n; unknown numbers are left out. */
  async idsIn(namespace: string, numbers: number[]): Promise<Map<number, string>> {
    const found = await this.db.query<{ n: number; entity_id: string }>(
      'SELECT n, COALESCE(written_as, entity_id::text) AS entity_id FROM session_refs WHERE session_id = $1 AND entity = $2 AND n = ANY($3::int[])',
      [this.sessionId, namespace, [...new Set(numbers.filter((n) => n <= MAX_REF_NUMBER))]],
    );
    return new Map(found.rows.map((row) => [row.n, row.entity_id]));
  }

  /**
   * Turns what the model passed as `<entity>_id` (a ref, or a name/title) into the user's row.
   * Unknown or ambiguous values, refs of another kind, and UUIDs become ToolInputErrors that
   * list candidates with their refs.
   */
  async resolve(entity: Entity, value: string, db: Queryable = this.db): Promise<ResolvedEntity> {
    const { noun } = ENTITY_TABLES[entity];
    const text = value.trim();
    if (namesByUuid(text)) {
      throw new ToolInputError(
        `The ${noun}_id is a database UUID (or stands where one was hidden); UUIDs are not accepted.`,
        `Use the ${noun}'s ref exactly as shown in earlier results (like ${noun}_1), or its name.`,
      );
    }
    // Refs in any case (`Habit_1`), and taken out of the marker they were shown in or quotes.
    const ref = (MARKED_REF.exec(text)?.[1] ?? unquoted(text) ?? text).toLowerCase();
    const refMatch = REF_PATTERN.exec(ref);
    if (refMatch && isEntity(refMatch[1] as string)) {
      return this.resolveRef(entity, refMatch[1] as Entity, Number(refMatch[2]), ref, db);
    }
    return this.resolveName(entity, text, db);
  }

  private async resolveRef(entity: Entity, kind: Entity, n: number, ref: string, db: Queryable) {
    const { noun } = ENTITY_TABLES[entity];
    if (kind !== entity) {
      return this.notARef(
        entity,
        ref,
        `${ref} is a ${ENTITY_TABLES[kind].noun}, not a ${noun}.`,
        `Pass a ${noun} ref (like ${noun}_1) or the ${noun}'s name.`,
        db,
      );
    }
    const { table, label } = ENTITY_TABLES[entity];
    // A ref the session gave whose row is gone has no `id` here; one it never gave, no row at all.
    const found =
      n <= MAX_REF_NUMBER
        ? await db.query<{ id: string | null; label: string | null }>(
            `SELECT e.id, e.${label} AS label FROM session_refs r LEFT JOIN ${table} e ON e.id = r.entity_id AND e.user_id = $4
             WHERE r.session_id = $1 AND r.entity = $2 AND r.n = $3`,
            [this.sessionId, entity, n, this.userId],
          )
        : { rows: [] };
    const row = found.rows[0];
    // The ref as the session gave it: `habit_001` finds habit_1, and answers as habit_1.
    if (row?.id) return { id: row.id, ref: `${entity}_${n}`, label: row.label as string };
    // Refs belong to one session: one never given here (seen in another session, or made up) is
    // no deleted row, and the candidates may well take its number.
    const problem = row
      ? `No ${noun} with ref ${ref} exists (it may have been deleted).`
      : `${ref} was not shown in this conversation (refs belong to the conversation that showed them).`;
    return this.notARef(entity, ref, problem, `Use one of the refs listed, or call the list tool to see the current ${noun}s.`, db);
  }

  /**
   * Text shaped like a ref that is none of this session's `entity` refs: the user's one `entity`
   * of that name if there is one (a document titled "goal_2026"), else an error whose candidates
   * are the most recent ones.
   */
  private async notARef(entity: Entity, text: string, problem: string, hint: string, db: Queryable): Promise<ResolvedEntity> {
    const { table, label, key } = ENTITY_TABLES[entity];
    const named = await db.query<{ id: string; label: string }>(
      `SELECT id, ${label} AS label FROM ${table} WHERE user_id = $1 AND ${key} = $2 LIMIT 2`,
      [this.userId, nameKey(text)],
    );
    const row = named.rows[0];
    if (row && named.rows.length === 1) return { id: row.id, ref: await this.refFor(entity, row.id), label: row.label };
    const candidates = await this.someCandidates(entity, '', db);
    throw new ToolInputError(`${problem}${listCandidates(candidates)}`, candidates.length > 0 ? hint : noneYet(entity), candidates);
  }

  private async resolveName(entity: Entity, name: string, db: Queryable) {
    const { table, label, key, noun } = ENTITY_TABLES[entity];
    // `total`: how many match in all, when more than the candidates listed.
    const exact = await db.query<{ id: string; label: string; total: number }>(
      `SELECT id, ${label} AS label, (COUNT(*) OVER ())::int AS total FROM ${table} WHERE user_id = $1 AND ${key} = ANY($2::text[])
       ORDER BY created_at LIMIT ${MAX_CANDIDATES}`,
      [this.userId, nameKeys(name)],
    );
    if (exact.rows.length === 1) {
      const row = exact.rows[0] as { id: string; label: string };
      return { id: row.id, ref: await this.refFor(entity, row.id), label: row.label };
    }
    if (exact.rows.length > 1) {
      const candidates = await this.toCandidates(entity, exact.rows);
      const places = await this.placesOf(entity, exact.rows, db);
      const total = exact.rows[0]?.total ?? exact.rows.length;
      const shown = total > exact.rows.length ? ` (the first ${exact.rows.length} listed)` : '';
      throw new ToolInputError(
        `${quoted(name)} matches ${total} ${noun}s${shown}.${listCandidates(candidates, places)}`,
        `Pass the ref of the one you mean.`,
        candidates,
      );
    }
    const candidates = await this.someCandidates(entity, name, db);
    throw new ToolInputError(
      `No ${noun} named ${quoted(name)} was found.${listCandidates(candidates)}`,
      candidates.length > 0 ? `Use one of the refs listed, or create the ${noun} first.` : noneYet(entity),
      candidates,
    );
  }

  /** Names containing the query (or, failing that, the most recent ones), with refs. */
  private async someCandidates(entity: Entity, name: string, db: Queryable): Promise<Candidate[]> {
    const { table, label, key } = ENTITY_TABLES[entity];
    const pattern = `%${nameKey(name).replace(/[\\%_]/g, (c) => `\\${c}`)}%`;
    const similar = await db.query<{ id: string; label: string }>(
      `SELECT id, ${label} AS label FROM ${table} WHERE user_id = $1 AND ${key} LIKE $2
       ORDER BY updated_at DESC LIMIT ${MAX_CANDIDATES}`,
      [this.userId, pattern],
    );
    const rows =
      similar.rows.length > 0
        ? similar.rows
        : (
            await db.query<{ id: string; label: string }>(
              `SELECT id, ${label} AS label FROM ${table} WHERE user_id = $1 ORDER BY updated_at DESC LIMIT ${MAX_CANDIDATES}`,
              [this.userId],
            )
          ).rows;
    return this.toCandidates(entity, rows);
  }

  /**
   * Where each folder or document sits (` in "Work"`, ` at the top level`): same-named folders
   * or documents differ only by their folder, and a list of identical names tells the model
   * nothing. Reminders are told apart by their times (timesOf).
   */
  private async placesOf(entity: Entity, rows: { id: string }[], db: Queryable): Promise<string[]> {
    if (entity === 'reminder') return this.timesOf(rows, db);
    const column = FOLDER_COLUMNS[entity];
    if (!column) return [];
    const found = await db.query<{ id: string; folder: string | null }>(
      `SELECT e.id, f.name AS folder FROM ${ENTITY_TABLES[entity].table} e LEFT JOIN folders f ON f.id = e.${column}
       WHERE e.user_id = $1 AND e.id = ANY($2::uuid[])`,
      [this.userId, rows.map((row) => row.id)],
    );
    const folders = new Map(found.rows.map((row) => [row.id, row.folder]));
    return rows.map((row) => {
      const folder = folders.get(row.id);
      return folder ? ` in ${quoted(folder)}` : ' at the top level';
    });
  }

  /**
   * When each reminder fires, on the user's clock (` at 2026-11-23 09:00 (America/Sao_Paulo)`):
   * reminders of the same text ("Water" at 9, 12 and 15) differ only by their times.
   */
  private async timesOf(rows: { id: string }[], db: Queryable): Promise<string[]> {
    const [zone, found] = await Promise.all([
      userTimeZone(db, this.userId),
      db.query<{ id: string; at: Date }>('SELECT id, at FROM reminders WHERE user_id = $1 AND id = ANY($2::uuid[])', [
        this.userId,
        rows.map((row) => row.id),
      ]),
    ]);
    const times = new Map(found.rows.map((row) => [row.id, ` at ${formatLocal(row.at, zone)}`]));
    return rows.map((row) => times.get(row.id) ?? '');
  }

  private async toCandidates(entity: Entity, rows: { id: string; label: string }[]): Promise<Candidate[]> {
    const refs = await this.refsFor(
      entity,
      rows.map((row) => row.id),
    );
    return rows.map((row) => ({ ref: refs.get(row.id) as string, name: row.label }));
  }
}

/** Quotes a name may come wrapped in: results show names as `"Work"`, and models copy them so. */
const QUOTED = /^(["'“‘«`])(.+)(["'”’»`])$/s;
const CLOSING_QUOTES: Record<string, string> = { '"': '"', "'": "'", '“': '”', '‘': '’', '«': '»', '`': '`' };

/** The text inside a matching pair of quotes around `text`, if it has one. */
function unquoted(text: string): string | undefined {
  const quoted = QUOTED.exec(text);
  return quoted && CLOSING_QUOTES[quoted[1] as string] === quoted[3] ? quoted[2] : undefined;
}

/**
 * The name a JSON string's escapes stand for (results quote names so, `quoted`): `My \"best\" plan`
 * is `My "best" plan`; undefined when `text` has no escape or is no JSON string's inside.
 */
function unescaped(text: string): string | undefined {
  if (!text.includes('\\')) return undefined;
  try {
    return JSON.parse(`"${text}"`) as string;
  } catch {
    return undefined;
  }
}

/**
 * The keys a name is matched by: its own, that of the name inside its quotes, when quoted, and
 * that of the name its escapes stand for, when copied from a result with them.
 */
function nameKeys(name: string): string[] {
  const inner = unquoted(name) ?? name;
  const decoded = unescaped(inner);
  return [...new Set([name, inner, ...(decoded === undefined ? [] : [decoded])].map(nameKey))];
}

/** `places[i]`, when given, says where candidate i is (placesOf). */
function listCandidates(candidates: Candidate[], places: string[] = []): string {
  if (candidates.length === 0) return '';
  return ` Candidates: ${candidates.map((c, i) => `${quoted(c.name)}${places[i] ?? ''} [ID: ${c.ref}]`).join(', ')}.`;
}

/** The hint when the user has none of a kind: no ref or name could be right, and there is no list to pick from. */
function noneYet(entity: Entity): string {
  return `There are no ${ENTITY_TABLES[entity].noun}s yet; create one first.`;
}
