import { execFile } from 'node:child_process';
import { connect, createServer, type AddressInfo, type Socket } from 'node:net';
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

/** `npm run migrate` against DATABASE_URL: its output, or its error output when it failed. */
async function migrate(databaseUrl: string): Promise<{ stdout: string; stderr: string }> {
  const script = path.join(__dirname, '..', 'scripts', 'dist', 'migrate.js');
  return promisify(execFile)(process.execPath, [script], { env: { ...process.env, DATABASE_URL: databaseUrl } }).catch(
    (error: { stderr?: string }) => ({ stdout: '', stderr: String(error.stderr) }),
  );
}

/**
 * PostgreSQL as a hosting provider offers it: a user may connect to their own database only, not
 * to the server's `postgres` one. A proxy in front of the real server that hangs up on a
 * connection asking for `postgres` (the startup message names the database in the clear).
 */
async function ownDatabaseOnly(): Promise<{ port: number; close: () => void }> {
  const sockets: Socket[] = [];
  const proxy = createServer((client) => {
    sockets.push(client);
    client.once('data', (startup: Buffer) => {
      const params = startup.subarray(8).toString('utf8').split('\0');
      if (params[params.indexOf('database') + 1] === 'postgres') {
        client.destroy();
        return;
      }
      const server = connect(Number(base.port || 5432), base.hostname);
      sockets.push(server);
      server.write(startup);
      client.pipe(server).pipe(client);
      server.on('error', () => client.destroy());
      client.on('error', () => server.destroy());
    });
  });
  proxy.listen(0, '127.0.0.1');
  await new Promise((resolve) => proxy.once('listening', resolve));
  const close = () => {
    for (const socket of sockets) socket.destroy();
    proxy.close();
  };
  return { port: (proxy.address() as AddressInfo).port, close };
}

it('migrates a database that exists without connecting to the server’s postgres database', async () => {
  const proxy = await ownDatabaseOnly();
  try {
    const url = Object.assign(new URL(base.href), { hostname: '127.0.0.1', port: String(proxy.port) }).href;
    expect(await migrate(url)).toEqual({ stdout: 'database is up to date\n', stderr: '' });
  } finally {
    proxy.close();
  }
});

it('creates and migrates a database named by a connection string whose host is a parameter', async () => {
  const url = `postgresql://${base.username}@/${name}?host=${base.hostname}&port=${base.port || 5432}`;
  const run = await migrate(url);

  expect(run.stderr).toBe('');
  expect(run.stdout).toMatch(/^migrated: 0001/);
  const created = await admin.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
  expect(created.rowCount).toBe(1);
});
