import { execFile } from 'node:child_process';
import path from 'node:path';
import { promisify } from 'node:util';
import pg from 'pg';

/**
 * `npm run migrate` creates the database it is pointed at (README.md#requirements), whatever form
 * of connection string the processes accept: drivers read forms (no host in the authority, the
 * host as a parameter, as for a Unix socket) a URL parser rejects.
 */
const base = new URL(process.env.DATABASE_URL as string);
const name = `${base.pathname.slice(1)}_socket_form`;
const admin = new pg.Pool({ connectionString: Object.assign(new URL(base.href), { pathname: '/postgres' }).href, max: 1 });

afterAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.end();
});

it('creates and migrates a database named by a connection string whose host is a parameter', async () => {
  const url = `postgresql://${base.username}@/${name}?host=${base.hostname}&port=${base.port || 5432}`;
  const migrate = path.join(__dirname, '..', 'scripts', 'dist', 'migrate.js');
  const run = await promisify(execFile)(process.execPath, [migrate], { env: { ...process.env, DATABASE_URL: url } }).catch(
    (error: { stderr?: string }) => ({ stdout: '', stderr: String(error.stderr) }),
  );

  expect(run.stderr).toBe('');
  expect(run.stdout).toMatch(/^migrated: 0001/);
  const created = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  expect(created.rowCount).toBe(1);
});
