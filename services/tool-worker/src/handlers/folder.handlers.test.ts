import { randomUUID } from 'node:crypto';
import { normalizeToolError, type ToolResult } from '@assistant/shared';
import { documentHandlers } from './document.handlers';
import { folderHandlers } from './folder.handlers';
import { insertTestUser, type TestUser } from '../../../../tests/helpers/db';
import { containsUuidAnywhere, ToolHarness } from '../../../../tests/helpers/tool-harness';

const harness = new ToolHarness({ ...folderHandlers, create_document: documentHandlers.create_document });

/** Every call of this file goes through here: no result, success or not, may show a UUID. */
async function run(...params: Parameters<typeof harness.run>): Promise<ToolResult> {
  const result = await harness.run(...params);
  expect(containsUuidAnywhere(result)).toBe(false);
  return result;
}

async function createFolder(user: TestUser, name: string, parent?: string): Promise<string> {
  const result = await run('create_folder', { name, parent_folder_id: parent }, user);
  expect(result.success).toBe(true);
  return result.folder_id as string;
}

async function folderCount(user: TestUser): Promise<number> {
  const found = await harness.pool.query<{ n: number }>('SELECT count(*)::int AS n FROM folders WHERE user_id = $1', [user.userId]);
  return found.rows[0]?.n ?? 0;
}

afterAll(async () => {
  await harness.close();
});

describe('create_folder', () => {
  it('creates a folder and answers with its ref, name, message and next step', async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('create_folder', { name: '  Work ' }, user);
    expect(result).toEqual({
      success: true,
      folder_id: 'folder_1',
      name: 'Work',
      message: 'Folder "Work" created [ID: folder_1].',
      next_step: 'To add a document to it, call create_document with folder_id="folder_1".',
    });
    const stored = await harness.pool.query('SELECT name, name_key, parent_id FROM folders WHERE user_id = $1', [user.userId]);
    expect(stored.rows).toEqual([{ name: 'Work', name_key: 'work', parent_id: null }]);
  });

  it('gives two folders folder_1 and folder_2, and the same folder the same ref later', async () => {
    const user = await insertTestUser(harness.pool);
    expect(await createFolder(user, 'Work')).toBe('folder_1');
    expect(await createFolder(user, 'Home')).toBe('folder_2');
    const first = await run('get_folder_contents', { folder_id: 'Work' }, user);
    const second = await run('get_folder_contents', { folder_id: 'work' }, user);
    expect([first.folder_id, second.folder_id]).toEqual(['folder_1', 'folder_1']);
  });

  it('creates a subfolder, resolving the parent by ref and reporting it as a ref', async () => {
    const user = await insertTestUser(harness.pool);
    const parent = await createFolder(user, 'Projects');
    const result = await run('create_folder', { name: 'Nexo', parent_folder_id: parent }, user);
    expect(result).toMatchObject({ success: true, folder_id: 'folder_2', parent_folder_id: 'folder_1' });
    expect(result.message).toBe('Folder "Nexo" created [ID: folder_2] inside folder "Projects" [ID: folder_1].');
  });

  it('resolves the parent by name, ignoring case and accents', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Meditação');
    const result = await run('create_folder', { name: 'Guided', parent_folder_id: 'meditacao' }, user);
    expect(result).toMatchObject({ success: true, parent_folder_id: 'folder_1' });
  });

  it('finds a folder whatever the ligatures, full-width letters or zero-width spaces in either spelling', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Ofﬁce ＲＥＵＮＩÃＯ');
    await createFolder(user, 'Work\u200B');
    const office = await run('create_folder', { name: 'Notes', parent_folder_id: 'office reuniao' }, user);
    expect(office).toMatchObject({ success: true, parent_folder_id: 'folder_1' });
    const work = await run('create_folder', { name: 'Drafts', parent_folder_id: 'WORK' }, user);
    expect(work).toMatchObject({ success: true, parent_folder_id: 'folder_2' });
    const again = await run('create_folder', { name: 'Office Reunião' }, user);
    expect(again).toMatchObject({ success: false, folder_id: 'folder_1' });
  });

  it('finds a folder named in the quotes results show names in ("Work", “Work”, \'Work\'), and a quoted ref', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    for (const quoted of ['"Work"', '“work”', "'WORK'", '«Work»', '"folder_1"']) {
      const result = await run('create_folder', { name: `In ${quoted}`, parent_folder_id: quoted }, user);
      expect(result).toMatchObject({ success: true, parent_folder_id: 'folder_1' });
    }
  });

  it('quotes a name holding quotes, backslashes or a line break as its errors do, and finds it copied back with or without the escapes', async () => {
    const user = await insertTestUser(harness.pool);
    const names = ['My "best" plan', 'C:\\Users\\', 'Trabalho\nnovo'];
    for (const [index, name] of names.entries()) {
      const created = await run('create_folder', { name }, user);
      expect(created.message).toBe(`Folder ${JSON.stringify(name)} created [ID: folder_${index + 1}].`);
      const clash = await run('create_folder', { name }, user);
      expect(clash.error).toContain(`${JSON.stringify(name)} already exists`);
      for (const copied of [JSON.stringify(name), `"${name}"`]) {
        const result = await run('get_folder_contents', { folder_id: copied }, user);
        expect(result).toMatchObject({ success: true, folder_id: `folder_${index + 1}` });
      }
    }
  });

  it('inserts one row when a create is retried with the same entity id', async () => {
    const user = await insertTestUser(harness.pool);
    const entityId = randomUUID();
    const first = await run('create_folder', { name: 'Work' }, user, entityId);
    const retry = await run('create_folder', { name: 'Work' }, user, entityId);
    expect(retry).toEqual(first);
    expect(await folderCount(user)).toBe(1);
  });

  it('refuses a folder whose name already exists at the same level, pointing at the existing one', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    const result = await run('create_folder', { name: 'WORK' }, user);
    expect(result).toEqual({
      success: false,
      error: 'A folder named "Work" already exists [ID: folder_1].',
      hint: 'Use folder_1 instead of creating it again.',
      folder_id: 'folder_1',
    });
    expect(await folderCount(user)).toBe(1);
  });

  it('lets only one of two parallel creates of the same name through', async () => {
    const user = await insertTestUser(harness.pool);
    const results = await Promise.all([run('create_folder', { name: 'Work' }, user), run('create_folder', { name: 'work' }, user)]);
    expect(results.map((result) => result.success).sort()).toEqual([false, true]);
    expect(await folderCount(user)).toBe(1);
  });

  it('allows the same name under different parents', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Archive');
    const parent = await createFolder(user, 'Work');
    expect(await createFolder(user, 'Archive', parent)).toBe('folder_3');
  });

  it('refuses an unknown parent ref, listing candidates with refs', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    const result = await run('create_folder', { name: 'Notes', parent_folder_id: 'folder_9' }, user);
    expect(result).toMatchObject({ success: false, candidates: [{ ref: 'folder_1', name: 'Work' }] });
    expect(result.error).toContain('folder_9');
    expect(await folderCount(user)).toBe(1);
  });

  it('refuses a UUID as parent with a hint to use the ref', async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('create_folder', { name: 'Notes', parent_folder_id: randomUUID() }, user);
    expect(result).toMatchObject({ success: false });
    expect(result.hint).toContain('ref');
    expect(await folderCount(user)).toBe(0);
  });

  it('refuses a name of only invisible characters (zero-width spaces, joiners, blank fillers), which reads as blank', async () => {
    const user = await insertTestUser(harness.pool);
    for (const name of ['\u200B', ' \u200B\u200D ', '\u2060\u00AD', '\u2800', '\u3164']) {
      const result = await run('create_folder', { name }, user);
      expect(result).toMatchObject({ success: false, error: 'Invalid arguments for create_folder: name: must not be blank.' });
    }
    await createFolder(user, 'Work');
    const renamed = await run('rename_folder', { folder_id: 'folder_1', new_name: '\u200B\u200C' }, user);
    expect(renamed).toMatchObject({ success: false, error: 'Invalid arguments for rename_folder: new_name: must not be blank.' });
    expect(await folderCount(user)).toBe(1);
  });
});

describe('rename_folder', () => {
  it('renames by ref, updating the key, with the old and new names in the message', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    const result = await run('rename_folder', { folder_id: 'folder_1', new_name: 'Trabalho Ótimo' }, user);
    expect(result).toMatchObject({ success: true, folder_id: 'folder_1', name: 'Trabalho Ótimo' });
    expect(result.message).toBe('Folder renamed from "Work" to "Trabalho Ótimo" [ID: folder_1].');
    expect(result.next_step).toContain('folder_1');
    const stored = await harness.pool.query('SELECT name_key FROM folders WHERE user_id = $1', [user.userId]);
    expect(stored.rows).toEqual([{ name_key: 'trabalho otimo' }]);
  });

  it('resolves by name ignoring case and accents', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Meditação');
    const result = await run('rename_folder', { folder_id: 'MEDITACAO', new_name: 'Calm' }, user);
    expect(result).toMatchObject({ success: true, folder_id: 'folder_1', name: 'Calm' });
  });

  it('allows a change of case only, but refuses the name of a sibling', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'work');
    await createFolder(user, 'Home');
    expect(await run('rename_folder', { folder_id: 'folder_1', new_name: 'Work' }, user)).toMatchObject({ success: true });
    const clash = await run('rename_folder', { folder_id: 'folder_1', new_name: 'home' }, user);
    expect(clash).toMatchObject({ success: false, folder_id: 'folder_1', existing_folder_id: 'folder_2' });
    expect(clash.error).toContain('[ID: folder_2]');
  });

  it('refuses an ambiguous name, listing both folders with refs', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    const home = await createFolder(user, 'Home');
    await createFolder(user, 'Archive', work);
    await createFolder(user, 'Archive', home);
    const result = await run('rename_folder', { folder_id: 'archive', new_name: 'Old' }, user);
    expect(result).toMatchObject({ success: false });
    expect(result.candidates).toEqual(
      expect.arrayContaining([
        { ref: 'folder_3', name: 'Archive' },
        { ref: 'folder_4', name: 'Archive' },
      ]),
    );
    // The names alone are the same: each candidate says which folder it is in.
    expect(result.error).toBe(
      '"archive" matches 2 folders. Candidates: "Archive" in "Work" [ID: folder_3], "Archive" in "Home" [ID: folder_4].',
    );
  });

  it('refuses an unknown name, listing candidates', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    const result = await run('rename_folder', { folder_id: 'Groceries', new_name: 'Food' }, user);
    expect(result).toMatchObject({ success: false, candidates: [{ ref: 'folder_1', name: 'Work' }] });
  });

  it('refuses a ref whose number no session reaches, listing candidates, without a retry', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    const result = await run('rename_folder', { folder_id: 'folder_99999999999', new_name: 'Home' }, user);
    expect(result).toMatchObject({ success: false, candidates: [{ ref: 'folder_1', name: 'Work' }] });
    expect(result.error).toContain('folder_99999999999 was not shown in this conversation');
  });

  it('refuses a UUID with a hint', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    const stored = await harness.pool.query<{ id: string }>('SELECT id FROM folders WHERE user_id = $1', [user.userId]);
    const result = await run('rename_folder', { folder_id: stored.rows[0]?.id, new_name: 'Home' }, user);
    expect(result).toMatchObject({ success: false });
    expect(result.hint).toContain('folder_1');
  });

  it("does not find another user's folder, by name or by a known id", async () => {
    const owner = await insertTestUser(harness.pool, 'Owner');
    const other = await insertTestUser(harness.pool, 'Other');
    await createFolder(owner, 'Secret');
    const byName = await run('rename_folder', { folder_id: 'Secret', new_name: 'Mine' }, other);
    expect(byName).toMatchObject({ success: false });
    expect(byName.error).toContain('No folder named "Secret"');

    // Even a ref of the other session that points at the owner's row must not reach it.
    const stored = await harness.pool.query<{ id: string }>('SELECT id FROM folders WHERE user_id = $1', [owner.userId]);
    await harness.pool.query("INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'folder', 7, $2)", [
      other.sessionId,
      stored.rows[0]?.id,
    ]);
    expect(await run('rename_folder', { folder_id: 'folder_7', new_name: 'Mine' }, other)).toMatchObject({ success: false });
    const names = await harness.pool.query('SELECT name FROM folders WHERE user_id = $1', [owner.userId]);
    expect(names.rows).toEqual([{ name: 'Secret' }]);
  });
});

describe('delete_folder', () => {
  it('deletes the folder with its subfolders and documents, counting them in the message', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    const archive = await createFolder(user, 'Archive', work);
    await run('create_document', { title: 'Plan', folder_id: work }, user);
    await run('create_document', { title: 'Old plan', folder_id: archive }, user);
    const result = await run('delete_folder', { folder_id: 'work' }, user);
    expect(result).toMatchObject({
      success: true,
      folder_id: 'folder_1',
      name: 'Work',
      deleted_subfolders: 1,
      deleted_documents: 2,
    });
    expect(result.message).toBe('Folder "Work" deleted [ID: folder_1], together with 1 subfolder and 2 documents inside it.');
    expect(result.next_step).toContain('folder_1');
    expect(await folderCount(user)).toBe(0);
    const docs = await harness.pool.query('SELECT 1 FROM documents WHERE user_id = $1', [user.userId]);
    expect(docs.rowCount).toBe(0);
  });

  it('says when the folder was empty, and then no longer knows its ref', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Empty');
    const result = await run('delete_folder', { folder_id: 'folder_1' }, user);
    expect(result.message).toBe('Folder "Empty" deleted [ID: folder_1]; it was empty.');
    const again = await run('delete_folder', { folder_id: 'folder_1' }, user);
    expect(again).toMatchObject({ success: false });
    expect(again.error).toContain('folder_1');
  });

  it("does not delete another user's folder", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createFolder(owner, 'Work');
    expect(await run('delete_folder', { folder_id: 'Work' }, other)).toMatchObject({ success: false });
    expect(await folderCount(owner)).toBe(1);
  });
});

describe('get_folder_contents', () => {
  it('lists documents and subfolders by name, with refs, in the result and the message', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    await createFolder(user, 'Archive', work);
    await run('create_document', { title: 'Plan', folder_id: work }, user);
    await run('create_document', { title: 'budget', folder_id: work }, user);
    const result = await run('get_folder_contents', { folder_id: 'work' }, user);
    expect(result).toEqual({
      success: true,
      folder_id: 'folder_1',
      name: 'Work',
      documents: [
        { document_id: 'document_2', title: 'budget' },
        { document_id: 'document_1', title: 'Plan' },
      ],
      subfolders: [{ folder_id: 'folder_2', name: 'Archive' }],
      message: [
        'Folder "Work" [ID: folder_1] has 2 documents and 1 subfolder.',
        '- "budget" [ID: document_2]',
        '- "Plan" [ID: document_1]',
        '- "Archive" [ID: folder_2]',
      ].join('\n'),
      next_step: expect.any(String),
    });
  });

  it('leaves subfolders out when asked', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    await createFolder(user, 'Archive', work);
    const result = await run('get_folder_contents', { folder_id: work, include_subfolders: false }, user);
    expect(result).not.toHaveProperty('subfolders');
    expect(result.message).toBe('Folder "Work" [ID: folder_1] has 0 documents.');
    expect(result.next_step).toContain('create_document with folder_id="folder_1"');
  });

  it('takes include_subfolders written as text ("false", "True"), as some models send booleans', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    await createFolder(user, 'Archive', work);
    const without = await run('get_folder_contents', { folder_id: work, include_subfolders: 'false' }, user);
    expect(without).toMatchObject({ success: true });
    expect(without).not.toHaveProperty('subfolders');
    const withThem = await run('get_folder_contents', { folder_id: work, include_subfolders: 'True' }, user);
    expect(withThem).toMatchObject({ success: true, subfolders: [{ folder_id: 'folder_2', name: 'Archive' }] });
    expect(await run('get_folder_contents', { folder_id: work, include_subfolders: 'maybe' }, user)).toMatchObject({ success: false });
  });

  it('refuses an unknown folder and a UUID', async () => {
    const user = await insertTestUser(harness.pool);
    expect(await run('get_folder_contents', { folder_id: 'Nowhere' }, user)).toMatchObject({ success: false });
    const uuid = await run('get_folder_contents', { folder_id: randomUUID() }, user);
    expect(uuid).toMatchObject({ success: false, hint: expect.stringContaining('ref') });
  });
});

describe('errors naming a folder', () => {
  // A gotcha groups errors by their shape (normalizeToolError): a name holding a quote, a backslash
  // or a line break must neither stay in the shape nor set its error apart from the same error about "Work".
  const names = ['Work', 'My "best" plan', 'C:\\Users\\', 'Plan “B”', 'a”b', 'Trabalho\nCasa'];

  it('reads as one pitfall whatever the name, for a folder not found', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Home');
    const shapes = new Set<string>();
    for (const name of names) {
      const result = await run('get_folder_contents', { folder_id: name }, user);
      shapes.add(normalizeToolError(String(result.error)));
    }
    expect([...shapes]).toEqual(['No folder named "…" was found. Candidates: "…" [ID: <ref>].']);
  });

  it('reads as one pitfall whatever the name, for a folder that already exists', async () => {
    const user = await insertTestUser(harness.pool);
    const shapes = new Set<string>();
    for (const name of names) {
      await createFolder(user, name);
      shapes.add(normalizeToolError(String((await run('create_folder', { name }, user)).error)));
    }
    expect([...shapes]).toEqual(['A folder named "…" already exists [ID: <ref>].']);
  });
});
