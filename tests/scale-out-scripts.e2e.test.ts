import { spawn } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import path from 'node:path';
import { waitForExit } from '../scripts/lib/processes';
import { freePort } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * `npm run start:*` run one process each, for scaling out (README.md#scaling-out), under a
 * supervisor that stops them with SIGTERM to npm: the process must get it, drain and exit 0, never
 * be left running without its npm.
 */
const ROOT = path.resolve(__dirname, '..');
const MARKER = `SCALE_OUT_SCRIPT_RUN=${process.pid}`;

/** Pids of processes this test started, known by the marker in their environment. */
function ours(): number[] {
  return fs.readdirSync('/proc').flatMap((entry) => {
    try {
      return /^\d+$/.test(entry) && fs.readFileSync(`/proc/${entry}/environ`, 'utf8').includes(`${MARKER}\0`) ? [Number(entry)] : [];
    } catch {
      return [];
    }
  });
}

afterAll(() => {
  for (const pid of ours()) process.kill(pid, 'SIGKILL');
});

/** `npm run <script>` with this test's marker, its output kept. */
function run(script: string, port: number) {
  const [name, value] = MARKER.split('=') as [string, string];
  const npm = spawn('npm', ['run', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, [name]: value, PORT: String(port), LOG_LEVEL: 'info' },
  });
  let output = '';
  for (const stream of [npm.stdout, npm.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  return { npm, output: () => output };
}

/** SIGTERM to npm, as a supervisor stops it: the process drains and exits 0, nothing left. */
async function stopGracefully({ npm, output }: ReturnType<typeof run>): Promise<void> {
  const exited = once(npm, 'exit');
  npm.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  const left = await waitForExit(ours(), 30_000);

  expect({ code, left }).toEqual({ code: 0, left: [] });
  expect(output()).toContain('shutting down');
}

it.each([
  ['start:gateway', 'gateway listening'],
  ['start:agent-worker', 'agent-worker started'],
  ['start:tool-worker', 'tool-worker started'],
])('npm run %s stops its process gracefully on SIGTERM to npm, exiting 0', async (script, started) => {
  const launched = run(script, await freePort());
  await waitFor(async () => launched.output().includes(started), `${script} running`, { timeoutMs: 60_000 });
  await stopGracefully(launched);
});

it('npm run start:gateway with PORT=0 listens on a port the system chooses, and logs that port', async () => {
  const gateway = run('start:gateway', 0);
  const port = await waitFor(() => /"port":(\d+),[^\n]*"msg":"gateway listening"/.exec(gateway.output())?.[1], 'the gateway listening', {
    timeoutMs: 60_000,
  });
  expect(port).not.toBe('0');
  expect((await fetch(`http://127.0.0.1:${port}/healthz`)).status).toBe(200);
  await stopGracefully(gateway);
});
