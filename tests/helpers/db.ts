import pg from 'pg';
import type { Queryable } from '@assistant/shared';

/** Direct access to the test run's database, for assertions and fault injection. */
export function testDb(): pg.Pool {
  return new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 3 });
}

/**
 * Fault injection in the database itself: a row trigger on `table` running the PL/pgSQL
 * `body` (which sees NEW). Returns the function that removes it.
 */
export async function injectFault(
  db: pg.Pool,
  name: string,
  table: string,
  body: string,
  when: 'BEFORE' | 'AFTER' = 'BEFORE',
): Promise<() => Promise<void>> {
  await db.query(`
    CREATE OR REPLACE FUNCTION ${name}() RETURNS trigger AS $$
    BEGIN
      ${body}
      RETURN NEW;
    END $$ LANGUAGE plpgsql;
    DROP TRIGGER IF EXISTS ${name} ON ${table};
    CREATE TRIGGER ${name} ${when} INSERT ON ${table} FOR EACH ROW EXECUTE FUNCTION ${name}();
  `);
  return async () => {
    await db.query(`DROP TRIGGER IF EXISTS ${name} ON ${table}`);
  };
}

/** A user with one chat session: each test makes its own so tests cannot see each other's rows. */
export interface TestUser {
  userId: string;
  sessionId: string;
}

/** A user row and its main session, for tests that work below the HTTP API. */
export async function insertTestUser(db: Queryable, displayName = 'Test user'): Promise<TestUser> {
  const user = await db.query<{ id: string }>('INSERT INTO users (display_name) VALUES ($1) RETURNING id', [displayName]);
  const userId = (user.rows[0] as { id: string }).id;
  const session = await db.query<{ id: string }>(
    "INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main') RETURNING id",
    [userId],
  );
  return { userId, sessionId: (session.rows[0] as { id: string }).id };
}
