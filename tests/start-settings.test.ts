import { spawnSync } from 'node:child_process';
import path from 'node:path';
import { readStartSettings } from '../scripts/lib/local-services';

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
