import { insertTestUser, testDb } from '../../../../tests/helpers/db';
import { trackToolError } from './track-error';

const pool = testDb();
const newUser = async () => (await insertTestUser(pool, 'Gotchas')).userId;

afterAll(async () => {
  await pool.end();
});

const tooLong = (n: number) =>
  `Invalid arguments for rename_document: new_title: Too big: expected string to have <=255 characters (got ${n}).`;

async function gotchas(userId: string) {
  const found = await pool.query(
    'SELECT tool_name, pattern, description, source, occurrences, first_seen_at, last_seen_at FROM gotchas WHERE user_id = $1',
    [userId],
  );
  return found.rows;
}

describe('trackToolError', () => {
  it('records one gotcha on the third occurrence of the same normalised error, then keeps counting', async () => {
    const user = await newUser();
    await trackToolError(pool, user, 'rename_document', tooLong(300));
    await trackToolError(pool, user, 'rename_document', tooLong(301));
    expect(await gotchas(user)).toEqual([]);
    await trackToolError(pool, user, 'rename_document', tooLong(302));
    const [gotcha, ...more] = await gotchas(user);
    expect(more).toEqual([]);
    expect(gotcha).toMatchObject({
      tool_name: 'rename_document',
      pattern: 'Invalid arguments for rename_document: new_title: Too big: expected string to have <=<n> characters (got <n>).',
      description: tooLong(302),
      source: 'auto_detected',
      occurrences: 3,
    });
    expect(gotcha.first_seen_at.getTime()).toBeLessThanOrEqual(gotcha.last_seen_at.getTime());
    await trackToolError(pool, user, 'rename_document', tooLong(303));
    expect(await gotchas(user)).toEqual([expect.objectContaining({ occurrences: 4 })]);
  });

  it('counts per user and per tool, and different errors apart', async () => {
    const user = await newUser();
    const other = await newUser();
    await trackToolError(pool, user, 'rename_document', tooLong(300));
    await trackToolError(pool, user, 'rename_folder', tooLong(300));
    await trackToolError(pool, other, 'rename_document', tooLong(300));
    await trackToolError(pool, user, 'rename_document', 'No document named "Plan" was found.');
    expect(await gotchas(user)).toEqual([]);
    expect(await gotchas(other)).toEqual([]);
  });

  it('keeps a long error whole up to its last whole character: never half an emoji, which would read as "\uFFFD"', async () => {
    const user = await newUser();
    // 11 characters, then emoji of two: the 1,000th character is the first half of one.
    const error = `No habit: "${'🌱'.repeat(600)}" was found.`;
    for (let n = 0; n < 3; n++) await trackToolError(pool, user, 'update_habit', error);
    const [gotcha] = await gotchas(user);
    expect(gotcha?.description).not.toContain('\uFFFD');
    expect(gotcha?.description).toBe(error.slice(0, 999));
  });

  /** Two occurrences of the same delete_folder error, the first `firstHours` and the last `lastHours` ago. */
  async function twoErrorsBack(user: string, firstHours: number, lastHours: number): Promise<void> {
    await trackToolError(pool, user, 'delete_folder', 'folder is locked');
    await trackToolError(pool, user, 'delete_folder', 'folder is locked');
    await pool.query(
      `UPDATE tool_error_counts SET window_started_at = NOW() - make_interval(hours => $2), last_seen_at = NOW() - make_interval(hours => $3)
       WHERE user_id = $1`,
      [user, firstHours, lastHours],
    );
  }

  it('starts counting again when the window of 24 hours has passed', async () => {
    const user = await newUser();
    await twoErrorsBack(user, 25, 25);
    await trackToolError(pool, user, 'delete_folder', 'folder is locked');
    expect(await gotchas(user)).toEqual([]);
    const counted = await pool.query('SELECT occurrences FROM tool_error_counts WHERE user_id = $1', [user]);
    expect(counted.rows).toEqual([{ occurrences: 1 }]);
  });

  it('records a gotcha for three occurrences within 24 hours that straddle the end of a window', async () => {
    const user = await newUser();
    // The first 26 hours ago, the second 20 hours ago: only the second is within 24 hours of the next two.
    await twoErrorsBack(user, 26, 20);
    await trackToolError(pool, user, 'delete_folder', 'folder is locked');
    expect(await gotchas(user)).toEqual([]);
    await trackToolError(pool, user, 'delete_folder', 'folder is locked');
    const [gotcha] = await gotchas(user);
    expect(gotcha).toMatchObject({ tool_name: 'delete_folder', occurrences: 3 });
    expect(Date.now() - gotcha.first_seen_at.getTime()).toBeGreaterThan(19 * 3_600_000);
  });
});
