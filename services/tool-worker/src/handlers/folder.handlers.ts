import { nameKey, ok, quoted } from '@assistant/shared';
import { listLines, listRows } from './entity-list';
import { alreadyExists, findSameName, insertReserved, loadOwnRow, lockedSameName, lockNames, nameTaken, plural } from './entity-support';
import type { ToolContext, ToolHandlers } from './handler';

interface FolderRow {
  id: string;
  name: string;
  parent_id: string | null;
}

export const folderHandlers: Pick<ToolHandlers, 'create_folder' | 'rename_folder' | 'delete_folder' | 'get_folder_contents'> = {
  async create_folder(args, ctx) {
    const parent = args.parent_folder_id ? await ctx.refs.resolve('folder', args.parent_folder_id, ctx.db) : undefined;
    const parentId = parent?.id ?? null;
    const existing = await lockedSameName(ctx, 'folder', args.name, { column: 'parent_id', id: parentId });
    if (existing) return alreadyExists(ctx, 'folder', existing, 'named');
    const folder = await insertReserved(
      ctx,
      `INSERT INTO folders (id, user_id, parent_id, name, name_key) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO NOTHING`,
      [ctx.entityId, ctx.userId, parentId, args.name, nameKey(args.name)],
      () => loadFolder(ctx, ctx.entityId),
    );
    const fields = await folderFields(ctx, folder);
    const where = parent ? ` inside folder ${quoted(parent.label)} [ID: ${parent.ref}]` : '';
    return ok(
      `Folder ${quoted(fields.name)} created [ID: ${fields.folder_id}]${where}.`,
      fields,
      `To add a document to it, call create_document with folder_id="${fields.folder_id}".`,
    );
  },

  async rename_folder(args, ctx) {
    const target = await ctx.refs.resolve('folder', args.folder_id, ctx.db);
    await lockNames(ctx, 'folder');
    const folder = await loadFolder(ctx, target.id);
    const clash = await findSameName(ctx, 'folder', args.new_name, folder.id, { column: 'parent_id', id: folder.parent_id });
    if (clash) return nameTaken(ctx, 'folder', target, clash, 'named', { where: ' next to it', advice: 'Choose a different name' });
    await ctx.db.query('UPDATE folders SET name = $3, name_key = $4, updated_at = NOW() WHERE id = $1 AND user_id = $2', [
      folder.id,
      ctx.userId,
      args.new_name,
      nameKey(args.new_name),
    ]);
    const fields = await folderFields(ctx, { ...folder, name: args.new_name });
    return ok(
      `Folder renamed from ${quoted(folder.name)} to ${quoted(args.new_name)} [ID: ${fields.folder_id}].`,
      fields,
      `Its ref is still ${fields.folder_id}; to see what it holds, call get_folder_contents with folder_id="${fields.folder_id}".`,
    );
  },

  async delete_folder(args, ctx) {
    const target = await ctx.refs.resolve('folder', args.folder_id, ctx.db);
    const counted = await ctx.db.query<{ subfolders: number; documents: number }>(
      `WITH RECURSIVE tree AS (
         SELECT id FROM folders WHERE id = $1 AND user_id = $2
         UNION ALL
         SELECT f.id FROM folders f JOIN tree t ON f.parent_id = t.id
       )
       SELECT ((SELECT count(*) FROM tree) - 1)::int AS subfolders,
              (SELECT count(*) FROM documents WHERE folder_id IN (SELECT id FROM tree))::int AS documents`,
      [target.id, ctx.userId],
    );
    const { subfolders, documents } = counted.rows[0] ?? { subfolders: 0, documents: 0 };
    // Subfolders and every document below go with it through ON DELETE CASCADE.
    await ctx.db.query('DELETE FROM folders WHERE id = $1 AND user_id = $2', [target.id, ctx.userId]);
    const contents =
      subfolders + documents === 0
        ? '; it was empty'
        : `, together with ${plural(subfolders, 'subfolder')} and ${plural(documents, 'document')} inside it`;
    return ok(
      `Folder ${quoted(target.label)} deleted [ID: ${target.ref}]${contents}.`,
      { folder_id: target.ref, name: target.label, deleted_subfolders: subfolders, deleted_documents: documents },
      `${target.ref} and everything that was inside it no longer exist; do not use their refs again.`,
    );
  },

  async get_folder_contents(args, ctx) {
    const folder = await ctx.refs.resolve('folder', args.folder_id, ctx.db);
    const documents = await listItems(
      ctx,
      'document',
      'title AS label',
      'documents WHERE user_id = $1 AND folder_id = $2 ORDER BY title_key, title',
      folder.id,
    );
    const subfolders =
      (args.include_subfolders ?? true)
        ? await listItems(
            ctx,
            'folder',
            'name AS label',
            'folders WHERE user_id = $1 AND parent_id = $2 ORDER BY name_key, name',
            folder.id,
          )
        : undefined;

    const counts = [plural(documents.total, 'document'), ...(subfolders ? [plural(subfolders.total, 'subfolder')] : [])];
    const lines = [
      ...listLines(documents.items, documents.total, 'documents'),
      ...(subfolders ? listLines(subfolders.items, subfolders.total, 'subfolders') : []),
    ];
    const empty = documents.total + (subfolders?.total ?? 0) === 0;
    return ok(
      [`Folder ${quoted(folder.label)} [ID: ${folder.ref}] has ${counts.join(' and ')}.`, ...lines].join('\n'),
      {
        folder_id: folder.ref,
        name: folder.label,
        documents: documents.items.map((item) => ({ document_id: item.ref, title: item.label })),
        ...(subfolders ? { subfolders: subfolders.items.map((item) => ({ folder_id: item.ref, name: item.label })) } : {}),
      },
      empty
        ? `To add a document to it, call create_document with folder_id="${folder.ref}".`
        : 'To work on one of these, pass its ref as document_id or folder_id.',
    );
  },
};

function loadFolder(ctx: ToolContext, id: string): Promise<FolderRow> {
  return loadOwnRow<FolderRow>(ctx, 'folder', 'SELECT id, name, parent_id FROM folders WHERE id = $1 AND user_id = $2', id);
}

async function folderFields(ctx: ToolContext, folder: FolderRow) {
  const folder_id = await ctx.refs.refFor('folder', folder.id);
  const parent_folder_id = folder.parent_id ? await ctx.refs.refFor('folder', folder.parent_id) : undefined;
  return { folder_id, name: folder.name, ...(parent_folder_id ? { parent_folder_id } : {}) };
}

/** The folder's documents or subfolders, as refs and labels. */
async function listItems(ctx: ToolContext, entity: 'folder' | 'document', label: string, rest: string, folderId: string) {
  const { rows, refs, total } = await listRows<{ id: string; label: string }>(ctx, entity, `id, ${label}`, rest, [ctx.userId, folderId]);
  return { items: rows.map((row) => ({ ref: refs.get(row.id) as string, label: row.label })), total };
}
