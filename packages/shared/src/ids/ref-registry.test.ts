import { randomUUID } from 'node:crypto';
import { insertTestUser, testDb } from '../../../../tests/helpers/db';
import { RefRegistry } from './ref-registry';

const pool = testDb();
afterAll(() => pool.end());

async function registry(): Promise<RefRegistry> {
  const user = await insertTestUser(pool);
  return new RefRegistry(pool, user.sessionId, user.userId);
}

describe('RefRegistry.refsIn', () => {
  it('numbers new ids in the order given, once each, and keeps the refs ids already have', async () => {
    const refs = await registry();
    const [a, b, c] = [randomUUID(), randomUUID(), randomUUID()];
    expect(await refs.refsIn('folder', [b, a, b])).toEqual(
      new Map([
        [b, 'folder_1'],
        [a, 'folder_2'],
      ]),
    );
    expect(await refs.refsIn('folder', [c, a])).toEqual(
      new Map([
        [c, 'folder_3'],
        [a, 'folder_2'],
      ]),
    );
    // Another namespace has its own numbers.
    expect(await refs.refsIn('document', [a])).toEqual(new Map([[a, 'document_1']]));
  });

  it('gives every caller the same ref when many ask for the same new ids at once', async () => {
    const refs = await registry();
    const ids = [randomUUID(), randomUUID(), randomUUID()];
    const answers = await Promise.all(Array.from({ length: 8 }, () => refs.refsIn('folder', ids)));
    const first = answers[0] as Map<string, string>;
    expect(first.size).toBe(3);
    for (const answer of answers) expect(answer).toEqual(first);
    expect(new Set(first.values()).size).toBe(3);
  });

  it('answers the ref another caller registered while this one waited to insert it', async () => {
    const refs = await registry();
    const id = randomUUID();
    const other = await pool.connect();
    try {
      await other.query('BEGIN');
      await other.query(`INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'folder', 41, $2)`, [refs.sessionId, id]);
      const asked = refs.refsIn('folder', [id]);
      await waitForLockWait();
      await other.query('COMMIT');
      expect(await asked).toEqual(new Map([[id, 'folder_41']]));
    } finally {
      other.release();
    }
  });
});

describe('RefRegistry.idsIn', () => {
  it('answers the ids of known numbers and leaves out numbers never given, however large', async () => {
    const refs = await registry();
    const id = randomUUID();
    await refs.refsIn('notes', [id]);
    expect(await refs.idsIn('notes', [1, 2, 99_999_999_999])).toEqual(new Map([[1, id]]));
  });
});

/** Until some statement of this database waits for a lock (the other caller's uncommitted row). */
async function waitForLockWait(): Promise<void> {
  for (;;) {
    const found = await pool.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event_type = 'Lock'`);
    if (found.rowCount) return;
    await new Promise((resolve) => setImmediate(resolve));
  }
}
