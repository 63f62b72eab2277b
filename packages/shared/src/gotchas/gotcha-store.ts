import type { Queryable } from '../db';
import { clipText } from '../text';

/**
 * What a captured error says of its tool (docs/memory.md#gotchas): the call's own problem
 * (`arguments`: refused arguments, or the tool's answer that it could not do it), or a failure on
 * the tool's side after its attempts: it timed out, its MCP server could not be reached, or
 * another error.
 */
export type GotchaCause = 'arguments' | 'timeout' | 'unavailable' | 'failure';

/** A gotcha (docs/memory.md#gotchas): a known way a tool fails for this user, captured or written by hand. */
export interface Gotcha {
  id: string;
  tool_name: string | null;
  /** The normalised error message it was captured from; null for a manual gotcha. */
  pattern: string | null;
  description: string;
  source: 'auto_detected' | 'manual';
  occurrences: number;
  first_seen: Date;
  last_seen: Date;
  created_at: Date;
}

const COLUMNS = `id, tool_name, pattern, description, source, occurrences,
  first_seen_at AS first_seen, last_seen_at AS last_seen, created_at`;

/** Most recently seen first. */
export async function listGotchas(db: Queryable, userId: string, limit = 200): Promise<Gotcha[]> {
  const found = await db.query<Gotcha>(
    `SELECT ${COLUMNS} FROM gotchas WHERE user_id = $1 ORDER BY last_seen_at DESC, created_at DESC LIMIT $2`,
    [userId, limit],
  );
  return found.rows;
}

export async function addManualGotcha(
  db: Queryable,
  userId: string,
  input: { tool_name?: string | undefined; description: string },
): Promise<Gotcha> {
  const found = await db.query<Gotcha>(
    `INSERT INTO gotchas (user_id, tool_name, description, source) VALUES ($1, $2, $3, 'manual') RETURNING ${COLUMNS}`,
    [userId, input.tool_name ?? null, input.description],
  );
  return found.rows[0] as Gotcha;
}

/** What a pitfall line says of a gotcha: `cause` is null for a manual one. */
export type Pitfall = Pick<Gotcha, 'tool_name' | 'description' | 'source' | 'occurrences'> & { cause: GotchaCause | null };

/**
 * SQL for the pitfalls of the given tools plus the general (tool-less) ones, most recently seen
 * first, as one JSON array: a model step reads them with its other inputs (context/step-input.ts).
 */
export function pitfallsJson(userId: string, tools: string, limit: string): string {
  return `(SELECT COALESCE(json_agg(json_build_object('tool_name', tool_name, 'description', description, 'source', source,
       'occurrences', occurrences, 'cause', cause) ORDER BY last_seen_at DESC, created_at DESC), '[]')
     FROM (SELECT tool_name, description, source, occurrences, cause, last_seen_at, created_at FROM gotchas WHERE user_id = ${userId} AND (tool_name IS NULL OR tool_name = ANY(${tools}::text[]))
       ORDER BY last_seen_at DESC, created_at DESC LIMIT ${limit}) g)`;
}

/**
 * One line of the turn context's `## Known pitfalls`. An error captured as a gotcha was written
 * for one session: its refs (`document_1`) are that session's, and its list of candidates names
 * the user's documents, habits and goals. A pitfall is shown in every session, groups included,
 * where refs mean other entities and the user's documents are never shown (docs/memory.md): so
 * a captured error is shown without its candidates, `[ID: …]` markers or refs.
 */
export function pitfallLine(gotcha: Pitfall, maxChars = 400): string {
  const flat = gotcha.description.replace(/\s+/g, ' ').trim();
  if (gotcha.source !== 'auto_detected') return clipText(`${gotcha.tool_name ? `${gotcha.tool_name}: ` : ''}${flat}`, maxChars);
  const what = withoutRefs(flat);
  const tool = gotcha.tool_name;
  const times = `${gotcha.occurrences} times`;
  // Only the call's own problem is the model's to fix; a failure on the tool's side is the user's to hear of.
  const text = {
    arguments: `${tool} failed ${times} this way: ${what} Check the arguments before calling it again.`,
    timeout: `${tool} timed out ${times} (${what}), not because of its arguments: if it times out again, tell the user instead of calling it again.`,
    unavailable: `${tool} could not reach its server ${times} (${what}): if it is still unavailable, tell the user instead of calling it again.`,
    failure: `${tool} failed ${times} on its side (${what}): if it fails again, tell the user instead of calling it again.`,
  }[gotcha.cause ?? 'arguments'];
  return clipText(text, maxChars);
}

function withoutRefs(error: string): string {
  return error
    .replace(/ ?Candidates: .*\[ID: [a-z0-9_]+\]\.?/g, '')
    .replace(/ ?\[ID: [a-z0-9_]+\]/g, '')
    .replace(/\b[a-z]+_\d+\b/g, '<ref>')
    .trim();
}
