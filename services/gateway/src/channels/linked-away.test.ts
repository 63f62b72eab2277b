import { withTransaction } from '@assistant/shared';
import { insertTestUser, testDb } from '../../../../tests/helpers/db';
import { adoptLinkedAway } from './linked-away';

const db = testDb();
afterAll(() => db.end());

/** A chat's own user (no identity or key left: the chat was just linked away) with one folder. */
async function chatUser(): Promise<{ userId: string; sessionId: string }> {
  const user = await insertTestUser(db, 'Chat user');
  await db.query("INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Trips', 'trips')", [user.userId]);
  return user;
}

const adopt = (from: string, to: string) => withTransaction(db, (client) => adoptLinkedAway(client, from, to));
const foldersOf = async (from: string) => (await db.query("SELECT 1 FROM folders WHERE name = 'Trips' AND user_id = $1", [from])).rowCount;

describe('what /link takes from the chat user it leaves behind', () => {
  it('moves what that user made and erases it', async () => {
    const [from, to] = [await chatUser(), await insertTestUser(db)];
    expect(await adopt(from.userId, to.userId)).toEqual({ erased: true, moved: true });
    expect(await foldersOf(from.userId)).toBe(0);
  });

  it('leaves a user whose turn is still open alone: its answer still reaches the chat', async () => {
    const [from, to] = [await chatUser(), await insertTestUser(db)];
    await db.query(`INSERT INTO turns (user_id, session_id, session_key, input) VALUES ($1, $2, 'agent:main:main', 'remind me at 5')`, [
      from.userId,
      from.sessionId,
    ]);
    expect(await adopt(from.userId, to.userId)).toEqual({ erased: false, moved: false });
    expect(await foldersOf(from.userId)).toBe(1);
  });

  it('leaves a user the operator disabled alone: only an admin erases it', async () => {
    const [from, to] = [await chatUser(), await insertTestUser(db)];
    await db.query('UPDATE users SET disabled_at = NOW() WHERE id = $1', [from.userId]);
    expect(await adopt(from.userId, to.userId)).toEqual({ erased: false, moved: false });
    expect(await foldersOf(from.userId)).toBe(1);
  });
});
