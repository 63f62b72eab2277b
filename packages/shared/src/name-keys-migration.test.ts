import fs from 'node:fs';
import path from 'node:path';
import { insertTestUser, testDb } from '../../../tests/helpers/db';
import { MIGRATIONS_DIR } from './migrate';
import { nameKey } from './text';

const pool = testDb();
afterAll(() => pool.end());

/** The Up section of a migration file, run again here on rows written with older keys. */
function upMigration(file: string): string {
  const text = fs.readFileSync(path.join(MIGRATIONS_DIR, file), 'utf8');
  return text.slice(0, text.indexOf('-- Down Migration'));
}

describe('0259_name_keys_compatibility', () => {
  it("brings keys written by the older nameKey to today's, leaving every other key as it was", async () => {
    const user = await insertTestUser(pool);
    // Keys as the older nameKey (NFD, marks dropped, lower case) wrote them; the last one on purpose not its fold.
    const rows = [
      ['Ofﬁce ＲＥＵＮＩÃＯ', 'ofﬁce ｒｅｕｎｉａｏ'],
      ['Work\u200B', 'work\u200b'],
      ['Meditação', 'meditacao'],
      ['Plain', 'kept as it was'],
    ];
    const client = await pool.connect();
    try {
      await client.query('BEGIN');
      for (const [name, key] of rows) {
        await client.query('INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, $2, $3)', [
          user.userId,
          name,
          key,
        ]);
      }
      await client.query(upMigration('0259_name_keys_compatibility.sql'));
      const found = await client.query<{ name: string; name_key: string }>(
        'SELECT name, name_key FROM folders WHERE user_id = $1 ORDER BY created_at, name',
        [user.userId],
      );
      await client.query('ROLLBACK');
      expect(new Map(found.rows.map((row) => [row.name, row.name_key]))).toEqual(
        new Map([
          ['Ofﬁce ＲＥＵＮＩÃＯ', nameKey('Ofﬁce ＲＥＵＮＩÃＯ')],
          ['Work\u200B', nameKey('Work\u200B')],
          ['Meditação', 'meditacao'],
          ['Plain', 'kept as it was'],
        ]),
      );
    } finally {
      client.release();
    }
  });
});
