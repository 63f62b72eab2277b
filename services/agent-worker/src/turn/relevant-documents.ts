import { BoundedMap, RefRegistry, searchDocuments, sessionKind, type Queryable, type RelevantDocument } from '@assistant/shared';
import type { TurnRow } from '@assistant/shared';

/** At most this many documents, each excerpt at most SNIPPET_CHARS, all within BUDGET_CHARS. */
export const RAG_LIMITS = { documents: 5, snippetChars: 600, budgetChars: 3_000 };

/**
 * Retrieval for the system prompt's `## Relevant documents` (docs/memory.md#request-layout): the user's documents
 * that best match the turn's message, by the same full-text search as `search_documents`, with
 * refs of the turn's session. Null when the user turned `use_rag_by_default` off, and always in a
 * group session: a user's documents are private, and the group could ask the model to quote them.
 */
export async function relevantDocuments(db: Queryable, turn: TurnRow): Promise<RelevantDocument[] | null> {
  if (sessionKind(turn.session_key) === 'group' || !turn.use_rag) return null;
  // Read for the turn's first step and kept for its others (on this worker): they answer the same
  // message, and a context that stays the same from step to step keeps the request's prefix cacheable.
  let found = turnDocuments.get(turn.id);
  if (!found) {
    found = search(db, turn);
    turnDocuments.set(turn.id, found);
    found.catch(() => turnDocuments.delete(turn.id));
  }
  return found;
}

/** The documents of the latest 1,000 turns, by turn id. */
const turnDocuments = new BoundedMap<string, Promise<RelevantDocument[]>>(1_000);

async function search(db: Queryable, turn: TurnRow): Promise<RelevantDocument[]> {
  const hits = await searchDocuments(db, turn.user_id, turn.input, {
    limit: RAG_LIMITS.documents,
    snippetChars: RAG_LIMITS.snippetChars,
  });
  const kept: typeof hits = [];
  let used = 0;
  for (const hit of hits) {
    const size = hit.title.length + hit.snippet.length;
    // The best match always goes in; the others only while they fit the budget.
    if (kept.length > 0 && used + size > RAG_LIMITS.budgetChars) break;
    kept.push(hit);
    used += size;
  }
  if (kept.length === 0) return [];
  const refs = await new RefRegistry(db, turn.session_id, turn.user_id).refsFor(
    'document',
    kept.map((hit) => hit.id),
  );
  return kept.map((hit) => ({ ref: refs.get(hit.id) as string, title: hit.title, snippet: hit.snippet }));
}
