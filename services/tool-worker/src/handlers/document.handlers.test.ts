import { randomUUID } from 'node:crypto';
import type { ToolResult } from '@assistant/shared';
import { documentHandlers } from './document.handlers';
import { folderHandlers } from './folder.handlers';
import { insertTestUser, type TestUser } from '../../../../tests/helpers/db';
import { containsUuidAnywhere, ToolHarness } from '../../../../tests/helpers/tool-harness';

const harness = new ToolHarness({ ...documentHandlers, create_folder: folderHandlers.create_folder });

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

async function createDocument(user: TestUser, title: string, folder?: string, content?: string): Promise<string> {
  const result = await run('create_document', { title, folder_id: folder, content }, user);
  expect(result.success).toBe(true);
  return result.document_id as string;
}

async function documents(user: TestUser) {
  const found = await harness.pool.query<{ title: string; title_key: string; folder: string | null }>(
    `SELECT d.title, d.title_key, f.name AS folder FROM documents d LEFT JOIN folders f ON f.id = d.folder_id
     WHERE d.user_id = $1 ORDER BY d.created_at`,
    [user.userId],
  );
  return found.rows;
}

afterAll(async () => {
  await harness.close();
});

describe('create_document', () => {
  it('creates a document in a folder, answering with both refs', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'Work');
    const result = await run('create_document', { title: 'Plan', folder_id: 'work', content: 'Step one' }, user);
    expect(result).toEqual({
      success: true,
      document_id: 'document_1',
      title: 'Plan',
      folder_id: 'folder_1',
      message: 'Document "Plan" created [ID: document_1] in folder "Work" [ID: folder_1].',
      next_step: 'To rename, move or delete it later, pass document_id="document_1".',
    });
    expect(await documents(user)).toEqual([{ title: 'Plan', title_key: 'plan', folder: 'Work' }]);
  });

  it('creates a document outside any folder, and numbers refs per session', async () => {
    const user = await insertTestUser(harness.pool);
    const first = await run('create_document', { title: 'Ideas' }, user);
    expect(first).not.toHaveProperty('folder_id');
    expect(first.message).toBe('Document "Ideas" created [ID: document_1].');
    expect(await createDocument(user, 'Diary')).toBe('document_2');
  });

  it('takes null for an optional argument as left out', async () => {
    const user = await insertTestUser(harness.pool);
    const result = await run('create_document', { title: 'Ideas', folder_id: null, content: null }, user);
    expect(result).toMatchObject({ success: true, document_id: 'document_1' });
    expect(result).not.toHaveProperty('folder_id');
    expect(await documents(user)).toEqual([{ title: 'Ideas', title_key: 'ideas', folder: null }]);
    const required = await run('create_document', { title: null }, user);
    expect(required).toMatchObject({ success: false, error: expect.stringContaining('title: ') });
  });

  it('inserts one row when a create is retried with the same entity id', async () => {
    const user = await insertTestUser(harness.pool);
    const entityId = randomUUID();
    const first = await run('create_document', { title: 'Plan' }, user, entityId);
    const retry = await run('create_document', { title: 'Plan' }, user, entityId);
    expect(retry).toEqual(first);
    expect(await documents(user)).toHaveLength(1);
  });

  it('refuses a title already used in the same folder, but not in another one', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    await createDocument(user, 'Plan', work);
    const result = await run('create_document', { title: 'PLAN', folder_id: work }, user);
    expect(result).toEqual({
      success: false,
      error: 'A document titled "Plan" already exists [ID: document_1].',
      hint: 'Use document_1 instead of creating it again.',
      document_id: 'document_1',
    });
    expect(await createDocument(user, 'Plan')).toBe('document_2');
  });

  it('refuses an unknown folder, an ambiguous one and a UUID, creating nothing', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    const home = await createFolder(user, 'Home');
    await createFolder(user, 'Notes', work);
    await createFolder(user, 'Notes', home);
    const unknown = await run('create_document', { title: 'Plan', folder_id: 'folder_9' }, user);
    expect(unknown).toMatchObject({ success: false, candidates: expect.arrayContaining([{ ref: 'folder_1', name: 'Work' }]) });
    const ambiguous = await run('create_document', { title: 'Plan', folder_id: 'notes' }, user);
    expect(ambiguous.candidates).toEqual([
      { ref: 'folder_3', name: 'Notes' },
      { ref: 'folder_4', name: 'Notes' },
    ]);
    const uuid = await run('create_document', { title: 'Plan', folder_id: randomUUID() }, user);
    expect(uuid).toMatchObject({ success: false, hint: expect.stringContaining('ref') });
    expect(await documents(user)).toEqual([]);
  });
});

describe('rename_document', () => {
  it('counts a title as the user reads it: 255 accented letters typed decomposed (e + combining acute) fit', async () => {
    const user = await insertTestUser(harness.pool);
    await createDocument(user, 'Draft');
    const decomposed = 'e\u0301'.repeat(255);
    const result = await run('rename_document', { document_id: 'document_1', new_title: decomposed }, user);
    expect(result).toMatchObject({ success: true, title: 'é'.repeat(255) });
    const longer = await run('rename_document', { document_id: 'document_1', new_title: `${decomposed}e` }, user);
    expect(longer).toMatchObject({ success: false, error: expect.stringContaining('new_title: must be at most 255 characters') });
  });

  it('renames by ref and by title ignoring case and accents, keeping the ref', async () => {
    const user = await insertTestUser(harness.pool);
    await createDocument(user, 'Meditação');
    const byTitle = await run('rename_document', { document_id: 'meditacao', new_title: 'Calma' }, user);
    expect(byTitle).toMatchObject({ success: true, document_id: 'document_1', title: 'Calma' });
    expect(byTitle.message).toBe('Document renamed from "Meditação" to "Calma" [ID: document_1].');
    expect(byTitle.next_step).toContain('document_1');
    const byRef = await run('rename_document', { document_id: 'document_1', new_title: 'Calm' }, user);
    expect(byRef).toMatchObject({ success: true, document_id: 'document_1', title: 'Calm' });
    expect(await documents(user)).toEqual([{ title: 'Calm', title_key: 'calm', folder: null }]);
  });

  it('quotes titles and folder names holding quotes as JSON strings in every message, and finds a title copied back from one', async () => {
    const user = await insertTestUser(harness.pool);
    await createFolder(user, 'My "best" plan');
    const created = await run('create_document', { title: 'Step "one"', folder_id: '"My \\"best\\" plan"' }, user);
    expect(created.message).toBe('Document "Step \\"one\\"" created [ID: document_1] in folder "My \\"best\\" plan" [ID: folder_1].');
    const found = await run('search_documents', { query: 'step "one"' }, user);
    expect(found.message).toBe('Found 1 document matching "step \\"one\\"":\n- "Step \\"one\\"" [ID: document_1]');
    const renamed = await run('rename_document', { document_id: '"Step \\"one\\""', new_title: 'C:\\Users\\' }, user);
    expect(renamed.message).toBe('Document renamed from "Step \\"one\\"" to "C:\\\\Users\\\\" [ID: document_1].');
  });

  it('finds a document by a title that only looks like a ref, of another kind or one never given', async () => {
    const user = await insertTestUser(harness.pool);
    await createDocument(user, 'goal_2026');
    await createDocument(user, 'document_9');
    const otherKind = await run('rename_document', { document_id: 'goal_2026', new_title: 'Goals 2026' }, user);
    expect(otherKind).toMatchObject({ success: true, document_id: 'document_1', title: 'Goals 2026' });
    const neverGiven = await run('rename_document', { document_id: 'document_9', new_title: 'Nine' }, user);
    expect(neverGiven).toMatchObject({ success: true, document_id: 'document_2', title: 'Nine' });
    // A ref the session gave still means that document, whatever another one is titled.
    await createDocument(user, 'document_1');
    const byRef = await run('rename_document', { document_id: 'document_1', new_title: 'One' }, user);
    expect(byRef).toMatchObject({ success: true, document_id: 'document_1', title: 'One' });
  });

  it('refuses the title of another document in the same folder', async () => {
    const user = await insertTestUser(harness.pool);
    await createDocument(user, 'Plan');
    await createDocument(user, 'Draft');
    const result = await run('rename_document', { document_id: 'Draft', new_title: 'plan' }, user);
    expect(result).toMatchObject({ success: false, document_id: 'document_2', existing_document_id: 'document_1' });
    expect(result.error).toContain('[ID: document_1]');
  });

  it("refuses an unknown title, a UUID and another user's document", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createDocument(owner, 'Secret');
    await createDocument(other, 'Mine');
    const unknown = await run('rename_document', { document_id: 'Secret', new_title: 'Ours' }, other);
    expect(unknown).toMatchObject({ success: false, candidates: [{ ref: 'document_1', name: 'Mine' }] });
    const uuid = await run('rename_document', { document_id: randomUUID(), new_title: 'Ours' }, other);
    expect(uuid).toMatchObject({ success: false, hint: expect.stringContaining('ref') });
    expect(await documents(owner)).toEqual([{ title: 'Secret', title_key: 'secret', folder: null }]);
  });
});

describe('move_document', () => {
  it('moves a document into a folder resolved by name, reporting the folder ref', async () => {
    const user = await insertTestUser(harness.pool);
    await createDocument(user, 'Plan');
    await createFolder(user, 'Arquivo Antigo');
    const result = await run('move_document', { document_id: 'plan', folder_id: 'arquivo antigo' }, user);
    expect(result).toMatchObject({ success: true, document_id: 'document_1', title: 'Plan', folder_id: 'folder_1' });
    expect(result.message).toBe('Document "Plan" [ID: document_1] moved to folder "Arquivo Antigo" [ID: folder_1].');
    expect(result.next_step).toContain('folder_1');
    expect(await documents(user)).toEqual([{ title: 'Plan', title_key: 'plan', folder: 'Arquivo Antigo' }]);
  });

  it('answers a move into the folder it is already in with a next step', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    await createDocument(user, 'Plan', work);
    const result = await run('move_document', { document_id: 'plan', folder_id: 'work' }, user);
    expect(result).toEqual({
      success: true,
      document_id: 'document_1',
      title: 'Plan',
      folder_id: 'folder_1',
      message: 'Document "Plan" [ID: document_1] is already in folder "Work" [ID: folder_1].',
      next_step: 'To see everything in it, call get_folder_contents with folder_id="folder_1".',
    });
  });

  it('refuses to move next to a document with the same title', async () => {
    const user = await insertTestUser(harness.pool);
    const archive = await createFolder(user, 'Archive');
    await createDocument(user, 'Plan', archive);
    await createDocument(user, 'Plan');
    const result = await run('move_document', { document_id: 'document_2', folder_id: archive }, user);
    expect(result).toMatchObject({ success: false, existing_document_id: 'document_1' });
  });

  it('refuses a folder ref where a document is expected, and an ambiguous title', async () => {
    const user = await insertTestUser(harness.pool);
    const a = await createFolder(user, 'A');
    const b = await createFolder(user, 'B');
    await createDocument(user, 'Plan', a);
    await createDocument(user, 'Plan', b);
    const wrongKind = await run('move_document', { document_id: 'folder_1', folder_id: b }, user);
    expect(wrongKind).toMatchObject({ success: false, error: expect.stringContaining('not a document') });
    const wrongFolder = await run('move_document', { document_id: 'document_1', folder_id: 'document_2' }, user);
    expect(wrongFolder).toEqual({
      success: false,
      error: 'document_2 is a document, not a folder. Candidates: "B" [ID: folder_2], "A" [ID: folder_1].',
      hint: "Pass a folder ref (like folder_1) or the folder's name.",
      candidates: [
        { ref: 'folder_2', name: 'B' },
        { ref: 'folder_1', name: 'A' },
      ],
    });
    const ambiguous = await run('move_document', { document_id: 'plan', folder_id: b }, user);
    expect(ambiguous.candidates).toEqual([
      { ref: 'document_1', name: 'Plan' },
      { ref: 'document_2', name: 'Plan' },
    ]);
    await createDocument(user, 'PLAN');
    const threePlans = await run('delete_document', { document_id: 'Plan' }, user);
    expect(threePlans.error).toBe(
      '"Plan" matches 3 documents. Candidates: "Plan" in "A" [ID: document_1], "Plan" in "B" [ID: document_2], "PLAN" at the top level [ID: document_3].',
    );
  });
});

describe('delete_document', () => {
  it('deletes by title, showing the removed ref, and then no longer finds it', async () => {
    const user = await insertTestUser(harness.pool);
    const work = await createFolder(user, 'Work');
    await createDocument(user, 'Plan', work);
    const result = await run('delete_document', { document_id: 'PLAN' }, user);
    expect(result).toMatchObject({ success: true, document_id: 'document_1', title: 'Plan', folder_id: 'folder_1' });
    expect(result.message).toBe('Document "Plan" deleted [ID: document_1].');
    expect(result.next_step).toContain('document_1');
    expect(await documents(user)).toEqual([]);
    expect(await run('delete_document', { document_id: 'document_1' }, user)).toMatchObject({ success: false });
  });

  it("does not delete another user's document", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createDocument(owner, 'Plan');
    expect(await run('delete_document', { document_id: 'Plan' }, other)).toMatchObject({ success: false });
    expect(await documents(owner)).toHaveLength(1);
  });
});

describe('search_documents', () => {
  it('finds words in titles and content ignoring case and accents, title matches first', async () => {
    const user = await insertTestUser(harness.pool);
    const folder = await createFolder(user, 'Health');
    await createDocument(user, 'Diary', undefined, 'Today I tried MEDITAÇÃO for ten minutes.');
    await createDocument(user, 'Meditação guiada', folder, 'Breathe.');
    await createDocument(user, 'Groceries', undefined, 'Milk');
    const result = await run('search_documents', { query: 'meditacao' }, user);
    expect(result).toMatchObject({
      success: true,
      documents: [
        { document_id: 'document_2', title: 'Meditação guiada', folder_id: 'folder_1', snippet: 'Breathe.' },
        { document_id: 'document_1', title: 'Diary', snippet: 'Today I tried MEDITAÇÃO for ten minutes.' },
      ],
    });
    expect(result.message).toBe(
      'Found 2 documents matching "meditacao":\n- "Meditação guiada" [ID: document_2]\n- "Diary" [ID: document_1]',
    );
    expect(await run('search_documents', { query: 'Meditação' }, user)).toMatchObject({
      documents: [{ document_id: 'document_2' }, { document_id: 'document_1' }],
    });
  });

  it("answers no match with an empty list, and never finds another user's documents", async () => {
    const owner = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await createDocument(owner, 'Secret plan', undefined, 'plan');
    const result = await run('search_documents', { query: 'plan' }, other);
    expect(result).toMatchObject({ success: true, documents: [], message: 'No documents match "plan".' });
  });

  it('returns at most 10 documents, hiding UUIDs that appear in content', async () => {
    const user = await insertTestUser(harness.pool);
    for (let i = 1; i <= 12; i += 1) await createDocument(user, `Note ${i}`, undefined, `ref ${randomUUID()} here`);
    const result = await run('search_documents', { query: 'note' }, user);
    expect(result.documents).toHaveLength(10);
  });

  it('searches by a long pasted text, by its first words, and echoes it shortened', async () => {
    const user = await insertTestUser(harness.pool);
    await createDocument(user, 'Budget', undefined, 'Quarterly budget review');
    const query = `quarterly budget ${'and so on '.repeat(150)}`;
    const result = await run('search_documents', { query }, user);
    expect(result).toMatchObject({ success: true, documents: [{ document_id: 'document_1' }] });
    expect((result.message as string).length).toBeLessThan(200);
    expect(result.message).toMatch(/^Found 1 document matching "quarterly budget and so on .*\.\.\.":/);
    const tooLong = await run('search_documents', { query: 'x'.repeat(4_001) }, user);
    expect(tooLong).toMatchObject({
      success: false,
      error: 'Invalid arguments for search_documents: query: must be at most 4000 characters.',
    });
  });
});
