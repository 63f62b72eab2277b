import { randomUUID } from 'node:crypto';
import { insertTestUser, testDb } from '../../../../tests/helpers/db';
import { nameKey } from '../text';
import { searchDocuments } from './document-search';

const pool = testDb();
const newUser = async () => (await insertTestUser(pool, 'Search')).userId;

afterAll(async () => {
  await pool.end();
});

async function addDocument(userId: string, title: string, content = ''): Promise<string> {
  const id = randomUUID();
  await pool.query('INSERT INTO documents (id, user_id, title, title_key, content) VALUES ($1, $2, $3, $4, $5)', [
    id,
    userId,
    title,
    nameKey(title),
    content,
  ]);
  return id;
}

const titles = async (userId: string, query: string) => (await searchDocuments(pool, userId, query)).map((hit) => hit.title);

describe('searchDocuments (full text, Portuguese and English)', () => {
  it('finds "Receita de bolo de cenoura" for "bolos de cenoura", by stem, only for its owner', async () => {
    const owner = await newUser();
    const other = await newUser();
    await addDocument(owner, 'Receita de bolo de cenoura', 'Três cenouras, quatro ovos, farinha e açúcar.');
    await addDocument(owner, 'Lista de compras', 'Leite e pão.');
    expect(await titles(owner, 'bolos de cenoura')).toEqual(['Receita de bolo de cenoura']);
    expect(await titles(owner, 'Você tem aquela receita dos bolos de cenoura?')).toEqual(['Receita de bolo de cenoura']);
    expect(await titles(other, 'bolos de cenoura')).toEqual([]);
  });

  it('stems English, folds accents and case, and ranks title matches first', async () => {
    const user = await newUser();
    await addDocument(user, 'Diary', 'Today I went running and tried MEDITAÇÃO.');
    await addDocument(user, 'Meditação guiada', 'Breathe.');
    await addDocument(user, 'Run log', 'Five kilometres.');
    expect(await titles(user, 'meditacao')).toEqual(['Meditação guiada', 'Diary']);
    expect(await titles(user, 'runs')).toEqual(['Run log', 'Diary']);
  });

  it('ignores words that are stop words in either language, so "de" alone finds nothing', async () => {
    const user = await newUser();
    await addDocument(user, 'Plano de viagem', 'Ir de trem.');
    expect(await titles(user, 'de')).toEqual([]);
    expect(await titles(user, 'what about the')).toEqual([]);
    expect(await titles(user, '')).toEqual([]);
  });

  it('gives a short one-line excerpt around the match, without UUIDs', async () => {
    const user = await newUser();
    const filler = 'Lorem ipsum dolor sit amet. '.repeat(40);
    await addDocument(user, 'Notes', `${filler}\nThe orchid greenhouse code is ${randomUUID()} today.\n${filler}`);
    const [hit] = await searchDocuments(pool, user, 'orchid', { snippetChars: 120 });
    expect(hit?.snippet).toContain('orchid');
    expect(hit?.snippet).toContain('[hidden id]');
    expect(hit?.snippet).not.toContain('Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet. Lorem ipsum dolor sit amet. Lorem');
    expect(hit?.snippet.length).toBeLessThanOrEqual(120);
    expect(hit?.snippet).not.toContain('\n');
  });

  it('honours the limit', async () => {
    const user = await newUser();
    for (let i = 1; i <= 6; i++) await addDocument(user, `Budget ${i}`);
    expect(await searchDocuments(pool, user, 'budget', { limit: 4 })).toHaveLength(4);
  });
});
