import { randomUUID } from 'node:crypto';
import { RefRegistry, ToolInputError, UUID_PATTERN } from '@assistant/shared';
import { insertTestUser, testDb } from '../../../../tests/helpers/db';
import { McpRefs } from './mcp-refs';

const pool = testDb();
afterAll(() => pool.end());

async function refsFor(server: string) {
  const user = await insertTestUser(pool);
  return new McpRefs(new RefRegistry(pool, user.sessionId, user.userId), server);
}

describe('McpRefs', () => {
  it('shows each UUID of a result as a ref of the server, the same ref every time', async () => {
    const refs = await refsFor('home-lab');
    const [a, b] = [randomUUID(), randomUUID()];
    expect(await refs.hide(`lamp ${a}, door ${b}, lamp again ${a.toUpperCase()}`)).toBe(
      'lamp home-lab_1, door home-lab_2, lamp again home-lab_1',
    );
    expect(await refs.hide(`door ${b}`)).toBe('door home-lab_2');
    expect(await refs.hide('no ids here')).toBe('no ids here');
  });

  it('turns the refs in arguments back into UUIDs, wherever they stand in strings', async () => {
    const refs = await refsFor('notes');
    const id = randomUUID();
    await refs.hide(id);
    expect(await refs.reveal({ note_id: 'notes_1', list: ['see notes_1'], other: 'folder_1', count: 1 })).toEqual({
      note_id: id,
      list: [`see ${id}`],
      other: 'folder_1',
      count: 1,
    });
  });

  it('gives a UUID back as its server first wrote it: servers that write capitals may compare them as text', async () => {
    const refs = await refsFor('photos');
    const [upper, lower] = [randomUUID().toUpperCase(), randomUUID()];
    expect(await refs.hide(`${upper} ${lower} ${upper.toLowerCase()}`)).toBe('photos_1 photos_2 photos_1');
    expect(await refs.reveal({ ids: ['photos_1', 'photos_2'] })).toEqual({ ids: [upper, lower] });
  });

  it('refuses UUIDs and refs the conversation never showed', async () => {
    const refs = await refsFor('notes');
    await expect(refs.reveal({ note_id: randomUUID() })).rejects.toThrow(ToolInputError);
    await expect(refs.reveal({ note_id: 'notes_7' })).rejects.toThrow('notes_7 is not a ref of this conversation.');
  });

  it('leaves alone text that only looks like a ref inside a longer value, or a ref of another server', async () => {
    const refs = await refsFor('notes');
    const id = randomUUID();
    await refs.hide(id);
    const args = { file: 'notes_2024.md', query: 'see notes_9 and notes_1', of: 'my-notes_1' };
    expect(await refs.reveal(args)).toEqual({ file: 'notes_2024.md', query: `see notes_9 and ${id}`, of: 'my-notes_1' });
  });

  it('keeps refs per session: another session does not resolve them', async () => {
    const first = await refsFor('notes');
    const shown = await first.hide(randomUUID());
    const second = await refsFor('notes');
    await expect(second.reveal({ note_id: shown })).rejects.toThrow(ToolInputError);
    expect(shown).not.toMatch(UUID_PATTERN);
  });
});
