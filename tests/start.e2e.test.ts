import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import os from 'node:os';
import path from 'node:path';
import { freePort } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * `npm start` on a machine with nothing running (README.md#running-it): private
 * PostgreSQL and Redis on ports of this test's own (START_SERVICES=private), stopped every way a
 * person or a supervisor stops it; afterwards no process of it may be left. Run as root (CI is),
 * it also shows PostgreSQL runs as an unprivileged user, whether or not a `postgres` user exists.
 */
const ROOT = path.resolve(__dirname, '..');
const DATA = fs.mkdtempSync(path.join(os.tmpdir(), 'npm-start-'));
let ports: { pg: number; redis: number };

interface Run {
  npm: ChildProcess;
  output: () => string;
}

beforeAll(async () => {
  // The private PostgreSQL may run as another user, who must be able to reach its directory.
  fs.chmodSync(DATA, 0o755);
  ports = { pg: await freePort(), redis: await freePort() };
});

afterAll(async () => {
  for (const pid of ours()) process.kill(pid, 'SIGKILL');
  fs.rmSync(DATA, { recursive: true, force: true });
});

async function start(): Promise<Run> {
  const port = await freePort();
  const { npm, output } = launch(port);
  const deadline = Date.now() + 90_000;
  for (;;) {
    const ready = await fetch(`http://127.0.0.1:${port}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
    if (ready) return { npm, output };
    if (Date.now() > deadline || npm.exitCode !== null) throw new Error(`npm start did not get ready:\n${output()}`);
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
}

/** `npm start` with the gateway on `port`, its output kept. */
function launch(port: number): Run {
  const { DATABASE_URL: _d, REDIS_URL: _r, QUEUE_PREFIX: _q, ADMIN_TOKEN: _a, ...env } = process.env;
  const npm = spawn('npm', ['start'], {
    cwd: ROOT,
    // A process group of its own, like a terminal's job: the group can be signalled as a terminal would.
    detached: true,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: {
      ...env,
      START_SERVICES: 'private',
      START_PG_PORT: String(ports.pg),
      START_REDIS_PORT: String(ports.redis),
      START_DATA_DIR: DATA,
      PORT: String(port),
      LOG_LEVEL: 'warn',
      SHUTDOWN_TIMEOUT_MS: '5000',
    },
  });
  let output = '';
  npm.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  npm.stderr?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return { npm, output: () => output };
}

/**
 * Every process npm start ran: they carry this test's data directory in their environment, except
 * redis-server, whose process title overwrites it: that one is known by its port.
 */
function ours(): number[] {
  const marker = `START_DATA_DIR=${DATA}\0`;
  return fs.readdirSync('/proc').flatMap((entry) => {
    if (!/^\d+$/.test(entry)) return [];
    try {
      const mine = fs.readFileSync(`/proc/${entry}/environ`, 'utf8').includes(marker);
      return mine || commandOf(Number(entry)).includes(`redis-server 127.0.0.1:${ports.redis}`) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

const commandOf = (pid: number) => fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
const find = (pattern: RegExp) => ours().filter((pid) => pattern.test(commandOf(pid)));

async function expectNothingLeft(run: Run): Promise<void> {
  const deadline = Date.now() + 60_000;
  let left = ours();
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 200));
    left = ours();
  }
  const described = left.map((pid) => {
    try {
      return `${pid} ${commandOf(pid)}`;
    } catch {
      return `${pid} (gone)`;
    }
  });
  expect({ left: described, output: left.length > 0 ? run.output() : '' }).toEqual({ left: [], output: '' });
  expect(run.output()).not.toMatch(/Unhandled error event|\n\s+at /);
}

it('runs PostgreSQL unprivileged and Redis privately, and stops everything on SIGTERM to npm', async () => {
  const run = await start();
  const [postgres] = find(/\/postgres -D /);
  expect(postgres).toBeDefined();
  const uid = Number(/^Uid:\s+(\d+)/m.exec(fs.readFileSync(`/proc/${postgres}/status`, 'utf8'))?.[1]);
  if (process.getuid?.() === 0) expect(uid).not.toBe(0);
  expect(find(/redis-server/)).toHaveLength(1);
  expect(find(/services\/\S+\/dist\/main\.js/)).toHaveLength(3);

  process.kill(run.npm.pid as number, 'SIGTERM');
  await expectNothingLeft(run);
  expect(run.output()).toContain('SIGTERM: stopping gateway, agent-worker, tool-worker');
}, 150_000);

it('stops everything on SIGHUP to npm alone (kill -HUP), and on SIGHUP to the terminal group', async () => {
  const first = await start();
  process.kill(first.npm.pid as number, 'SIGHUP');
  await expectNothingLeft(first);

  const second = await start();
  process.kill(-(second.npm.pid as number), 'SIGHUP');
  await expectNothingLeft(second);
}, 240_000);

it('stops everything on Ctrl-C (SIGINT to the group) and when npm start itself is killed with -9', async () => {
  const first = await start();
  process.kill(-(first.npm.pid as number), 'SIGINT');
  await expectNothingLeft(first);

  const second = await start();
  const [starter] = find(/scripts\/dist\/start\.js/);
  process.kill(starter as number, 'SIGKILL');
  await expectNothingLeft(second);
}, 240_000);

it('stops a private PostgreSQL and Redis left by an earlier run, saying so, instead of adopting them', async () => {
  const crashed = await start();
  // Everything but the servers dies at once: what a machine crash of npm start's own processes leaves.
  for (const pid of find(/reaper\.js/)) process.kill(pid, 'SIGKILL');
  process.kill(-(crashed.npm.pid as number), 'SIGKILL');
  const [postgres] = find(/\/postgres -D /);
  const [redis] = find(/redis-server/);
  expect(postgres && redis).toBeTruthy();

  const next = await start();
  expect(next.output()).toContain(`a private PostgreSQL (pid ${postgres}) was left running by an earlier npm start: stopping it first`);
  expect(next.output()).toContain(`a private redis-server (pid ${redis}) was left running by an earlier npm start: stopping it first`);
  expect(find(/\/postgres -D /)).not.toContain(postgres);
  process.kill(next.npm.pid as number, 'SIGTERM');
  await expectNothingLeft(next);
}, 240_000);

it('stops at once, saying why, when PORT is taken, instead of restarting the gateway forever', async () => {
  const taken = createServer();
  await new Promise<void>((resolve) => taken.listen(0, resolve));
  try {
    const port = (taken.address() as AddressInfo).port;
    const run = launch(port);
    const [code] = (await once(run.npm, 'exit')) as [number | null];
    expect(code).toBe(1);
    expect(run.output()).toContain(`[start] PORT ${port} is taken by another program (or not allowed): stop it or set PORT`);
    expect(run.output()).not.toContain('restarting');
    await expectNothingLeft(run);
  } finally {
    taken.close();
  }
}, 150_000);

it('with PORT=0 runs the gateway on a port the system chooses, and prints that port', async () => {
  const run = launch(0);
  const said = await waitFor(
    () => /gateway on http:\/\/localhost:(\d+) /.exec(run.output())?.[1],
    'npm start saying where the gateway is',
    {
      timeoutMs: 90_000,
      detail: run.output,
    },
  );
  expect(said).not.toBe('0');
  const ready = () =>
    fetch(`http://127.0.0.1:${said}/readyz`).then(
      (res) => res.status === 200,
      () => false,
    );
  await waitFor(ready, 'the gateway ready there', { timeoutMs: 90_000, detail: run.output });
  process.kill(run.npm.pid as number, 'SIGTERM');
  await expectNothingLeft(run);
}, 150_000);
