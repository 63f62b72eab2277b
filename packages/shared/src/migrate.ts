import path from 'node:path';
import pg from 'pg';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../../migrations');

/** Creates the database named in the URL when it does not exist yet (README.md#requirements). */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const url = new URL(databaseUrl);
  const name = decodeURIComponent(url.pathname.replace(/^\//, ''));
  if (!name) throw new Error('DATABASE_URL names no database');
  url.pathname = '/postgres';
  const admin = new pg.Client({ connectionString: url.toString(), connectionTimeoutMillis: 5_000 });
  await admin.connect();
  try {
    const exists = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (exists.rowCount === 0) {
      await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((error: { code?: string }) => {
        // Two processes starting at once: the other one created it first.
        if (error.code !== '42P04' && error.code !== '23505') throw error;
      });
    }
  } finally {
    await admin.end();
  }
}

/** Applies every pending migration under a lock (node-pg-migrate is ESM-only, hence the import()). */
export async function migrate(databaseUrl: string, log: (message: string) => void = () => undefined): Promise<string[]> {
  await ensureDatabase(databaseUrl);
  const { runner } = await import('node-pg-migrate');
  const applied = await runner({
    databaseUrl,
    dir: MIGRATIONS_DIR,
    direction: 'up',
    migrationsTable: 'pgmigrations',
    count: Infinity,
    singleTransaction: true,
    log,
    logger: { debug: () => undefined, info: log, warn: log, error: log },
  });
  return applied.map((migration) => migration.name);
}
