import { clipText, nameKey, ok, quoted, searchDocuments, type Queryable, type ResolvedEntity } from '@assistant/shared';
import {
  alreadyExists,
  findSameName,
  insertReserved,
  loadOwnRow,
  lockedSameName,
  lockNames,
  nameTaken,
  plural,
  type NamedRow,
  type NameScope,
} from './entity-support';
import type { ToolContext, ToolHandlers } from './handler';

interface DocumentRow {
  id: string;
  title: string;
  folder_id: string | null;
}

interface SearchHit extends DocumentRow {
  snippet: string;
}

const SEARCH_LIMIT = 10;
/** How much of a query a search's message repeats. */
const ECHO_CHARS = 100;

export const documentHandlers: Pick<
  ToolHandlers,
  'create_document' | 'rename_document' | 'move_document' | 'delete_document' | 'search_documents'
> = {
  async create_document(args, ctx) {
    const folder = args.folder_id ? await ctx.refs.resolve('folder', args.folder_id, ctx.db) : undefined;
    const folderId = folder?.id ?? null;
    const existing = await lockedSameName(ctx, 'document', args.title, titleScope(folderId));
    if (existing) return alreadyExists(ctx, 'document', existing, 'titled');
    const document = await insertReserved(
      ctx,
      `INSERT INTO documents (id, user_id, folder_id, title, title_key, content) VALUES ($1, $2, $3, $4, $5, $6)
       ON CONFLICT (id) DO NOTHING`,
      [ctx.entityId, ctx.userId, folderId, args.title, nameKey(args.title), args.content ?? ''],
      () => loadDocument(ctx, ctx.entityId),
    );
    const fields = await documentFields(ctx, document);
    const where = folder ? ` in folder ${quoted(folder.label)} [ID: ${folder.ref}]` : '';
    return ok(
      `Document ${quoted(fields.title)} created [ID: ${fields.document_id}]${where}.`,
      fields,
      `To rename, move or delete it later, pass document_id="${fields.document_id}".`,
    );
  },

  async rename_document(args, ctx) {
    const target = await ctx.refs.resolve('document', args.document_id, ctx.db);
    await lockNames(ctx, 'document');
    const document = await loadDocument(ctx, target.id);
    const clash = await findSameTitle(ctx, document.folder_id, args.new_title, document.id);
    if (clash) return alreadyThere(ctx, target, clash, 'Choose a different title');
    await ctx.db.query('UPDATE documents SET title = $3, title_key = $4, updated_at = NOW() WHERE id = $1 AND user_id = $2', [
      document.id,
      ctx.userId,
      args.new_title,
      nameKey(args.new_title),
    ]);
    const fields = await documentFields(ctx, { ...document, title: args.new_title });
    return ok(
      `Document renamed from ${quoted(document.title)} to ${quoted(args.new_title)} [ID: ${fields.document_id}].`,
      fields,
      `Its ref is still ${fields.document_id}.`,
    );
  },

  async move_document(args, ctx) {
    const target = await ctx.refs.resolve('document', args.document_id, ctx.db);
    const folder = await ctx.refs.resolve('folder', args.folder_id, ctx.db);
    await lockNames(ctx, 'document');
    const document = await loadDocument(ctx, target.id);
    const fields = await documentFields(ctx, { ...document, folder_id: folder.id });
    const destination = `folder ${quoted(folder.label)} [ID: ${folder.ref}]`;
    const nextStep = `To see everything in it, call get_folder_contents with folder_id="${folder.ref}".`;
    if (document.folder_id === folder.id) {
      return ok(`Document ${quoted(document.title)} [ID: ${target.ref}] is already in ${destination}.`, fields, nextStep);
    }
    // Moving must not create the duplicate that create_document refuses.
    const clash = await findSameTitle(ctx, folder.id, document.title, document.id);
    if (clash) return alreadyThere(ctx, target, clash, 'Rename one of them first');
    await ctx.db.query('UPDATE documents SET folder_id = $3, updated_at = NOW() WHERE id = $1 AND user_id = $2', [
      document.id,
      ctx.userId,
      folder.id,
    ]);
    return ok(`Document ${quoted(document.title)} [ID: ${target.ref}] moved to ${destination}.`, fields, nextStep);
  },

  async delete_document(args, ctx) {
    const target = await ctx.refs.resolve('document', args.document_id, ctx.db);
    const document = await loadDocument(ctx, target.id);
    await ctx.db.query('DELETE FROM documents WHERE id = $1 AND user_id = $2', [document.id, ctx.userId]);
    return ok(
      `Document ${quoted(document.title)} deleted [ID: ${target.ref}].`,
      await documentFields(ctx, document),
      `${target.ref} no longer exists; do not use it again.`,
    );
  },

  async search_documents(args, ctx) {
    const hits = await findDocuments(ctx.db, ctx.userId, args.query);
    // The query as the message echoes it: a pasted paragraph is not repeated whole.
    const query = clipText(args.query.replace(/\s+/g, ' '), ECHO_CHARS);
    if (hits.length === 0) {
      return ok(`No documents match ${quoted(query)}.`, { documents: [] }, 'Try other words, or create the document with create_document.');
    }
    const refs = await ctx.refs.refsFor(
      'document',
      hits.map((hit) => hit.id),
    );
    const folderRefs = await ctx.refs.refsFor(
      'folder',
      hits.flatMap((hit) => (hit.folder_id ? [hit.folder_id] : [])),
    );
    const documents = hits.map((hit) => ({
      document_id: refs.get(hit.id) as string,
      title: hit.title,
      ...(hit.folder_id ? { folder_id: folderRefs.get(hit.folder_id) } : {}),
      snippet: hit.snippet,
    }));
    const lines = documents.map((doc) => `- ${quoted(doc.title)} [ID: ${doc.document_id}]`);
    return ok(
      [`Found ${plural(documents.length, 'document')} matching ${quoted(query)}:`, ...lines].join('\n'),
      { documents },
      'To rename, move or delete one, pass its document_id.',
    );
  },
};

/** The full-text search that retrieval for the context uses too (packages/shared/src/search). */
async function findDocuments(db: Queryable, userId: string, query: string): Promise<SearchHit[]> {
  return searchDocuments(db, userId, query, { limit: SEARCH_LIMIT });
}

/** A document with the same folded title in the same folder (or also outside any), other than exceptId. */
function findSameTitle(ctx: ToolContext, folderId: string | null, title: string, exceptId: string) {
  return findSameName(ctx, 'document', title, exceptId, titleScope(folderId));
}

/** Where a document's title must be unique: its folder (or outside any). */
function titleScope(folderId: string | null): NameScope {
  return { column: 'folder_id', id: folderId };
}

function alreadyThere(ctx: ToolContext, target: ResolvedEntity, clash: NamedRow, advice: string) {
  return nameTaken(ctx, 'document', target, clash, 'titled', { where: ' in that folder', advice });
}

function loadDocument(ctx: ToolContext, id: string): Promise<DocumentRow> {
  return loadOwnRow<DocumentRow>(ctx, 'document', 'SELECT id, title, folder_id FROM documents WHERE id = $1 AND user_id = $2', id);
}

async function documentFields(ctx: ToolContext, document: DocumentRow) {
  const document_id = await ctx.refs.refFor('document', document.id);
  const folder_id = document.folder_id ? await ctx.refs.refFor('folder', document.folder_id) : undefined;
  return { document_id, title: document.title, ...(folder_id ? { folder_id } : {}) };
}
