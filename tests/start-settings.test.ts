import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { readStartSettings } from '../scripts/lib/local-services';
import { freePort } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/** `npm start` reads its own settings (START_*) the way the processes read theirs (README.md#running-it). */
const START = path.join(__dirname, '..', 'scripts', 'dist', 'start.js');

it("stops npm start with one line per problem, for its own settings and the processes' alike", () => {
  const run = spawnSync(process.execPath, [START], {
    env: { ...process.env, PORT: 'x', START_SERVICES: 'both', START_PG_PORT: '1e3', START_REDIS_PORT: '70000' },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.status).toBe(1);
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    'invalid configuration:',
    '  PORT: must be a whole number from 0 to 65535',
    '  START_SERVICES: Invalid option: expected one of "auto"|"private"',
    '  START_PG_PORT: must be a whole number from 1 to 65535',
    '  START_REDIS_PORT: must be a whole number from 1 to 65535',
  ]);
  expect(run.stdout).toBe('');
});

it('reads a blank setting of its own as unset: its default applies', () => {
  expect(readStartSettings({ START_SERVICES: '', START_PG_PORT: ' ', START_REDIS_PORT: '', START_DATA_DIR: ' ' })).toEqual(
    readStartSettings({}),
  );
  expect(readStartSettings({})).toEqual({ START_SERVICES: 'auto', START_PG_PORT: 54329, START_REDIS_PORT: 63790 });
});

it('generates a new admin token when the kept one is empty, prints it and keeps it', async () => {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'start-token-'));
  const file = path.join(dataDir, 'admin-token');
  fs.writeFileSync(file, '\n');
  // A blank ADMIN_TOKEN is unset: npm start uses the kept one.
  const env = { ...process.env, ADMIN_TOKEN: '', START_DATA_DIR: dataDir, PORT: String(await freePort()) };
  const start = spawn(process.execPath, [START], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let output = '';
  start.stdout.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
  try {
    const printed = await waitFor(
      () => /ADMIN_TOKEN was not set; using the one in .*: (.*)\n/.exec(output)?.[1],
      'the admin token printed',
    );
    expect(printed).toMatch(/^[\w-]{32}$/);
    expect(fs.readFileSync(file, 'utf8').trim()).toBe(printed);
  } finally {
    start.kill('SIGTERM');
    await once(start, 'exit');
    fs.rmSync(dataDir, { recursive: true, force: true });
  }
});
