import pg from 'pg';

/** Direct access to the test run's database, for assertions and fault injection. */
export function testDb(): pg.Pool {
  return new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 3 });
}
