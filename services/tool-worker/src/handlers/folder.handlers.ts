import { fail, nameKey, ok } from '@assistant/shared';
import type { ToolContext, ToolHandlers } from './handler';

interface FolderRow {
  id: string;
  name: string;
  parent_id: string | null;
}

interface Item {
  ref: string;
  label: string;
}

/** Longest list get_folder_contents returns per kind: a result must fit in the model's context. */
const LIST_LIMIT = 100;

export const folderHandlers: Pick<
  ToolHandlers,
  'create_folder' | 'rename_folder' | 'delete_folder' | 'get_folder_contents'
> = {
  async create_folder(args, ctx) {
    const parent = args.parent_folder_id ? await ctx.refs.resolve('folder', args.parent_folder_id, ctx.db) : undefined;
    const parentId = parent?.id ?? null;
    await lockFolderNames(ctx);
    const existing = await findSibling(ctx, parentId, args.name, ctx.entityId);
    if (existing) {
      const ref = await ctx.refs.refFor('folder', existing.id);
      return fail(`A folder named "${existing.name}" already exists [ID: ${ref}].`, `Use ${ref} instead of creating it again.`, {
        folder_id: ref,
      });
    }
    await ctx.db.query(
      `INSERT INTO folders (id, user_id, parent_id, name, name_key) VALUES ($1, $2, $3, $4, $5)
       ON CONFLICT (id) DO NOTHING`,
      [ctx.entityId, ctx.userId, parentId, args.name, nameKey(args.name)],
    );
    // Read back rather than trust the insert: a retry after a crash answers for its first attempt's row.
    const fields = await folderFields(ctx, await loadFolder(ctx, ctx.entityId));
    const where = parent ? ` inside folder "${parent.label}" [ID: ${parent.ref}]` : '';
    return ok(
      `Folder "${fields.name}" created [ID: ${fields.folder_id}]${where}.`,
      fields,
      `To add a document to it, call create_document with folder_id="${fields.folder_id}".`,
    );
  },

  async rename_folder(args, ctx) {
    const target = await ctx.refs.resolve('folder', args.folder_id, ctx.db);
    await lockFolderNames(ctx);
    const folder = await loadFolder(ctx, target.id);
    const clash = await findSibling(ctx, folder.parent_id, args.new_name, folder.id);
    if (clash) {
      const ref = await ctx.refs.refFor('folder', clash.id);
      return fail(
        `Another folder named "${clash.name}" already exists next to it [ID: ${ref}].`,
        `Choose a different name, or use ${ref} if that is the folder you meant.`,
        { folder_id: target.ref, existing_folder_id: ref },
      );
    }
    await ctx.db.query('UPDATE folders SET name = $3, name_key = $4, updated_at = NOW() WHERE id = $1 AND user_id = $2', [
      folder.id,
      ctx.userId,
      args.new_name,
      nameKey(args.new_name),
    ]);
    const fields = await folderFields(ctx, { ...folder, name: args.new_name });
    return ok(
      `Folder renamed from "${folder.name}" to "${args.new_name}" [ID: ${fields.folder_id}].`,
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
      `Folder "${target.label}" deleted [ID: ${target.ref}]${contents}.`,
      { folder_id: target.ref, name: target.label, deleted_subfolders: subfolders, deleted_documents: documents },
      `${target.ref} and everything that was inside it no longer exist; do not use their refs again.`,
    );
  },

  async get_folder_contents(args, ctx) {
    const folder = await ctx.refs.resolve('folder', args.folder_id, ctx.db);
    const documents = await listItems(
      ctx,
      'document',
      'SELECT id, title AS label, count(*) OVER ()::int AS total FROM documents WHERE user_id = $1 AND folder_id = $2 ORDER BY title_key, title',
      folder.id,
    );
    const subfolders =
      (args.include_subfolders ?? true)
        ? await listItems(
            ctx,
            'folder',
            'SELECT id, name AS label, count(*) OVER ()::int AS total FROM folders WHERE user_id = $1 AND parent_id = $2 ORDER BY name_key, name',
            folder.id,
          )
        : undefined;

    const counts = [plural(documents.total, 'document'), ...(subfolders ? [plural(subfolders.total, 'subfolder')] : [])];
    const lines = [...itemLines(documents, 'documents'), ...(subfolders ? itemLines(subfolders, 'subfolders') : [])];
    const empty = documents.total + (subfolders?.total ?? 0) === 0;
    return ok(
      [`Folder "${folder.label}" [ID: ${folder.ref}] has ${counts.join(' and ')}.`, ...lines].join('\n'),
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

/**
 * Serialises one user's folder creates and renames: without it two parallel create_folder("Work")
 * calls could both pass the duplicate check before either commits.
 */
async function lockFolderNames(ctx: ToolContext): Promise<void> {
  await ctx.db.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`folders:${ctx.userId}`]);
}

/** A folder with the same folded name under the same parent (or also at top level), other than exceptId. */
async function findSibling(ctx: ToolContext, parentId: string | null, name: string, exceptId: string) {
  const found = await ctx.db.query<FolderRow>(
    `SELECT id, name, parent_id FROM folders
     WHERE user_id = $1 AND parent_id IS NOT DISTINCT FROM $2::uuid AND name_key = $3 AND id <> $4
     ORDER BY created_at LIMIT 1`,
    [ctx.userId, parentId, nameKey(name), exceptId],
  );
  return found.rows[0];
}

async function loadFolder(ctx: ToolContext, id: string): Promise<FolderRow> {
  const found = await ctx.db.query<FolderRow>('SELECT id, name, parent_id FROM folders WHERE id = $1 AND user_id = $2', [
    id,
    ctx.userId,
  ]);
  // Not a model error: the row vanished under us (or the reserved id is taken); a retry sorts it out.
  if (!found.rows[0]) throw new Error('folder row not found for this user');
  return found.rows[0];
}

async function folderFields(ctx: ToolContext, folder: FolderRow) {
  const folder_id = await ctx.refs.refFor('folder', folder.id);
  const parent_folder_id = folder.parent_id ? await ctx.refs.refFor('folder', folder.parent_id) : undefined;
  return { folder_id, name: folder.name, ...(parent_folder_id ? { parent_folder_id } : {}) };
}

async function listItems(ctx: ToolContext, entity: 'folder' | 'document', sql: string, folderId: string) {
  const found = await ctx.db.query<{ id: string; label: string; total: number }>(`${sql} LIMIT ${LIST_LIMIT}`, [
    ctx.userId,
    folderId,
  ]);
  const refs = await ctx.refs.refsFor(
    entity,
    found.rows.map((row) => row.id),
  );
  const items: Item[] = found.rows.map((row) => ({ ref: refs.get(row.id) as string, label: row.label }));
  return { items, total: found.rows[0]?.total ?? 0 };
}

function itemLines(list: { items: Item[]; total: number }, noun: string): string[] {
  const lines = list.items.map((item) => `- "${item.label}" [ID: ${item.ref}]`);
  const hidden = list.total - list.items.length;
  return hidden > 0 ? [...lines, `- … and ${hidden} more ${noun}`] : lines;
}

function plural(count: number, noun: string): string {
  return `${count} ${noun}${count === 1 ? '' : 's'}`;
}
