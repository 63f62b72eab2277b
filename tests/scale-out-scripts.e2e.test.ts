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

it.each([
  ['start:gateway', 'gateway listening'],
  ['start:agent-worker', 'agent-worker started'],
  ['start:tool-worker', 'tool-worker started'],
])('npm run %s stops its process gracefully on SIGTERM to npm, exiting 0', async (script, started) => {
  const [name, value] = MARKER.split('=') as [string, string];
  const npm = spawn('npm', ['run', script], {
    cwd: ROOT,
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, [name]: value, PORT: String(await freePort()), LOG_LEVEL: 'info' },
  });
  let output = '';
  for (const stream of [npm.stdout, npm.stderr]) stream.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  await waitFor(async () => output.includes(started), `${script} running`, { timeoutMs: 60_000 });

  const exited = once(npm, 'exit');
  npm.kill('SIGTERM');
  const [code] = (await exited) as [number | null];
  const left = await waitForExit(ours(), 30_000);

  expect({ code, left }).toEqual({ code: 0, left: [] });
  expect(output).toContain('shutting down');
});
