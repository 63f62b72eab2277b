import type { Queryable } from '../db';
import { clipText, nameKey, stripUuids } from '../text';

export interface DocumentSearchHit {
  id: string;
  title: string;
  folder_id: string | null;
  /** A short excerpt around the match (or the document's start), on one line, without UUIDs. */
  snippet: string;
}

export interface DocumentSearchOptions {
  limit?: number;
  snippetChars?: number;
}

/** A whole chat message can be the query: only its first words count. */
const MAX_QUERY_WORDS = 32;
/** ts_headline reads this much of a document to choose the excerpt. */
const HEADLINE_SOURCE_CHARS = 20_000;

/**
 * Full-text search over one user's documents: the `documents.search_vector` column (migration
 * 0041: title weight A, content weight B, each in Portuguese and English, accents folded by
 * unaccent where installed). Used by `search_documents` and by retrieval for the context, so
 * both find the same documents.
 *
 * Any word of the query may match (a chat message rarely has every word in one document), and
 * a word that is a stop word in either language is dropped first: otherwise "de" (an ordinary
 * English token) would match nearly every Portuguese text. Ranking: an exact title match, then
 * ts_rank (title words weigh more), then the most recently updated.
 */
export async function searchDocuments(
  db: Queryable,
  userId: string,
  query: string,
  options: DocumentSearchOptions = {},
): Promise<DocumentSearchHit[]> {
  const limit = options.limit ?? 10;
  const snippetChars = options.snippetChars ?? 200;
  const found = await db.query<DocumentSearchHit>(
    `WITH words AS (
       SELECT lexeme FROM unnest(to_tsvector('simple', left($2, 4000))) ORDER BY positions[1] LIMIT ${MAX_QUERY_WORDS}
     ), terms AS (
       SELECT plainto_tsquery('assistant_portuguese', lexeme) AS pt, plainto_tsquery('assistant_english', lexeme) AS en
       FROM words
     ), q AS (
       SELECT string_agg('(' || pt::text || ') | (' || en::text || ')', ' | ')::tsquery AS query
       FROM terms WHERE numnode(pt) > 0 AND numnode(en) > 0
     ), hits AS (
       SELECT d.id, d.title, d.folder_id, d.content, d.updated_at, q.query,
              d.title_key = $3 AS exact, ts_rank(d.search_vector, q.query) AS rank
       FROM documents d CROSS JOIN q
       WHERE d.user_id = $1 AND q.query IS NOT NULL AND d.search_vector @@ q.query
       ORDER BY exact DESC, rank DESC, d.updated_at DESC
       LIMIT $4
     )
     -- The excerpt is made only for the documents kept (ts_headline is the costly part).
     SELECT id, title, folder_id,
            ts_headline('assistant_portuguese', left(content, ${HEADLINE_SOURCE_CHARS}), query,
                        'StartSel="", StopSel="", MaxWords=40, MinWords=15, ShortWord=2') AS snippet
     FROM hits ORDER BY exact DESC, rank DESC, updated_at DESC`,
    [userId, query, nameKey(query), limit],
  );
  return found.rows.map((row) => ({ ...row, snippet: excerpt(row.snippet, snippetChars) }));
}

/** Content is the user's free text: one line, bounded, and free of UUIDs. */
function excerpt(text: string, max: number): string {
  const flat = stripUuids(text.replace(/\s+/g, ' ').trim());
  return clipText(flat, max);
}
