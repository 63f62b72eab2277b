import { execFileSync } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { Api } from '../scripts/lib/api';
import { freePort, TestSystem } from '../scripts/lib/system';

/**
 * `npm run start:*` do not migrate (README.md#scaling-out): a process started on a database that
 * lacks migrations, or does not exist yet, is not ready, saying what to run, rather than answering
 * every request 500.
 */
const base = new URL(process.env.DATABASE_URL as string);
const name = `${base.pathname.slice(1)}_unmigrated`;
const url = Object.assign(new URL(base.href), { pathname: `/${name}` }).href;
const missing = Object.assign(new URL(base.href), { pathname: `/${name}_missing` }).href;
const admin = new pg.Pool({ connectionString: Object.assign(new URL(base.href), { pathname: '/postgres' }).href, max: 1 });

beforeAll(async () => {
  await admin.query(`CREATE DATABASE "${name}"`);
});

afterAll(async () => {
  await admin.query(`DROP DATABASE IF EXISTS "${name}" WITH (FORCE)`);
  await admin.query(`DROP DATABASE IF EXISTS "${name}_missing" WITH (FORCE)`);
  await admin.end();
});

/** A gateway alone on `databaseUrl`, and its /readyz once its Redis connection is up (at first that is not ready either). */
async function gatewayOn(databaseUrl: string): Promise<{ system: TestSystem; readiness: { status: number; error: string } }> {
  const system = await new TestSystem().start({ env: { DATABASE_URL: databaseUrl }, services: [] });
  system.spawn('gateway');
  const api = new Api(system.url);
  const res = await system
    .waitFor(async () => {
      const answer = await api.get('/readyz').catch(() => undefined);
      return answer && !/redis/.test(String(answer.body.error)) ? answer : undefined;
    }, 'gateway answering, Redis connected')
    .catch(async (error: unknown) => {
      await system.stop();
      throw error;
    });
  return { system, readiness: { status: res.status, error: String(res.body.error) } };
}

/** `npm run migrate` on `databaseUrl`. */
function migrate(databaseUrl: string): void {
  execFileSync(process.execPath, [path.join(__dirname, '..', 'scripts', 'dist', 'migrate.js')], {
    env: { ...process.env, DATABASE_URL: databaseUrl },
    stdio: 'ignore',
  });
}

it('answers 503 on /readyz naming the missing migrations until `npm run migrate` ran, then 200', async () => {
  const { system, readiness } = await gatewayOn(url);
  try {
    expect(readiness.status).toBe(503);
    expect(readiness.error).toMatch(/^not ready: postgresql lacks \d+ migrations \(run npm run migrate\)$/);
    migrate(url);
    await system.waitReady();
  } finally {
    await system.stop();
  }
});

it('answers 503 on /readyz naming a database that does not exist yet until `npm run migrate` created it, then 200', async () => {
  const { system, readiness } = await gatewayOn(missing);
  try {
    expect(readiness).toEqual({ status: 503, error: `not ready: postgresql has no database "${name}_missing" (run npm run migrate)` });
    migrate(missing);
    await system.waitReady();
  } finally {
    await system.stop();
  }
});

it('answers 503 on /readyz naming PostgreSQL, and only it, while PostgreSQL does not answer', async () => {
  const closed = Object.assign(new URL(base.href), { port: String(await freePort()) }).href;
  const { system, readiness } = await gatewayOn(closed);
  await system.stop();
  expect(readiness).toEqual({ status: 503, error: 'not ready: postgresql did not answer' });
});
