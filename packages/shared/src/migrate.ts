import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { parseIntoClientConfig } from 'pg-connection-string';
import type { Queryable } from './db';

export const MIGRATIONS_DIR = path.resolve(__dirname, '../../../migrations');
const MIGRATIONS_TABLE = 'pgmigrations';

export class MigrationsPending extends Error {}

/** PostgreSQL's code for a connection to a database that does not exist. */
const UNDEFINED_DATABASE = '3D000';

/**
 * For /readyz: a connection refused because the database does not exist yet is a MigrationsPending
 * too, since `npm run migrate` creates it; any other failure is passed on.
 */
export function noDatabaseYet(databaseUrl: string): (error: unknown) => never {
  return (error) => {
    if ((error as { code?: string }).code !== UNDEFINED_DATABASE) throw error;
    throw new MigrationsPending(`postgresql has no database "${serverDatabase(databaseUrl).name}" (run npm run migrate)`);
  };
}

/**
 * For /readyz: throws MigrationsPending while a migration of this code is not applied. The
 * processes do not migrate (only `npm start` and `npm run migrate` do), and one started on an
 * older schema would answer every request with a 500. Once all are applied the check stays
 * passed for the process (migrations are never undone), so later probes cost no query.
 */
export function migrationsApplied(db: Queryable): () => Promise<void> {
  let applied = false;
  return async () => {
    if (applied) return;
    const expected = (await fs.promises.readdir(MIGRATIONS_DIR)).map((file) => path.parse(file).name);
    const rows = await db.query<{ name: string }>(`SELECT name FROM ${MIGRATIONS_TABLE}`).then(
      (result) => result.rows,
      (error: { code?: string }) => {
        // No table yet: never migrated.
        if (error.code === '42P01') return [];
        throw error;
      },
    );
    const names = new Set(rows.map((row) => row.name));
    const pending = expected.filter((name) => !names.has(name)).length;
    if (pending > 0) throw new MigrationsPending(`postgresql lacks ${pending} migrations (run npm run migrate)`);
    applied = true;
  };
}

/**
 * The database a connection string names, and a client config for the server's `postgres`
 * database, read by the driver's own parser: a URL parser rejects forms the driver takes (no host
 * in the authority, `?host=/var/run/postgresql` for a Unix socket).
 */
export function serverDatabase(databaseUrl: string): { name: string; server: pg.ClientConfig } {
  const config = parseIntoClientConfig(databaseUrl);
  return { name: config.database ?? '', server: { ...config, database: 'postgres' } };
}

/** Whether the database the URL names exists: connecting to it says so. */
async function databaseExists(databaseUrl: string): Promise<boolean> {
  const client = new pg.Client({ ...parseIntoClientConfig(databaseUrl), connectionTimeoutMillis: 5_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch (error) {
    if ((error as { code?: string }).code === UNDEFINED_DATABASE) return false;
    throw error;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * Creates the database named in the URL when it does not exist yet (README.md#requirements). Only
 * then through the server's `postgres` database: hosting providers often let a user connect to
 * their own database alone.
 */
export async function ensureDatabase(databaseUrl: string): Promise<void> {
  const { name, server } = serverDatabase(databaseUrl);
  if (!name) throw new Error('DATABASE_URL names no database');
  if (await databaseExists(databaseUrl)) return;
  const admin = new pg.Client({ ...server, connectionTimeoutMillis: 5_000 });
  await admin.connect();
  try {
    await admin.query(`CREATE DATABASE "${name.replace(/"/g, '""')}"`).catch((error: { code?: string }) => {
      // Two processes starting at once: the other one created it first.
      if (error.code !== '42P04' && error.code !== '23505') throw error;
    });
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
    migrationsTable: MIGRATIONS_TABLE,
    count: Infinity,
    singleTransaction: true,
    log,
    logger: { debug: () => undefined, info: log, warn: log, error: log },
  });
  return applied.map((migration) => migration.name);
}
