import fs from 'node:fs';
import path from 'node:path';
import { configSchema, parseConfig } from '@assistant/shared';

/**
 * The image and docker-compose.yml. docker-compose.yml runs the same processes as `npm start` (README.md#scaling-out): whatever an
 * operator can set for `npm start` in the environment (or `.env`) must reach the containers too.
 */
const compose = fs.readFileSync(path.join(__dirname, '..', 'docker-compose.yml'), 'utf8');
/** The settings every service shares: the `x-app` anchor, up to the first service. */
const shared = compose.slice(compose.indexOf('x-app:'), compose.indexOf('\nservices:'));
/** Fixed by the file itself: the addresses of its own PostgreSQL and Redis, the ports it maps and probes, the image's NODE_ENV. */
const FIXED = ['NODE_ENV', 'PORT', 'HEALTH_PORT', 'DATABASE_URL', 'REDIS_URL'];

describe('docker-compose.yml', () => {
  it('passes every setting of the configuration from the environment to every process', () => {
    const missing = Object.keys(configSchema.in.shape).filter(
      (name) => !FIXED.includes(name) && !new RegExp(`^ {4}${name}: .*\\$\\{${name}[:}]`, 'm').test(shared),
    );
    expect(missing).toEqual([]);
  });

  it('leaves a setting unset in the environment at its default: compose hands it over empty', () => {
    const names = Object.keys(configSchema.in.shape).filter((name) => !FIXED.includes(name));
    expect(parseConfig(Object.fromEntries(names.map((name) => [name, ''])))).toEqual(parseConfig({}));
  });

  it('requires no variable: a `${X:?…}` fails every compose command (config, logs, down) while X is unset', () => {
    expect(compose.match(/\$\{\w+:?\?[^}]*\}/g) ?? []).toEqual([]);
  });

  it('runs every process under an init that reaps orphans: the tool worker spawns MCP servers, which may spawn their own', () => {
    // Node as PID 1 never reaps a grandchild its parent left behind (npx's server, say): zombies pile up.
    expect(shared).toMatch(/^ {2}init: true$/m);
  });

  it('gives every process longer than SHUTDOWN_TIMEOUT_MS to drain before docker kills it', () => {
    // `docker stop` and `docker compose down` send SIGKILL after 10 s unless told otherwise.
    const graceSeconds = Number(/^ {2}stop_grace_period: (\d+)s$/m.exec(shared)?.[1] ?? 10);
    expect(graceSeconds * 1000).toBeGreaterThan(parseConfig({}).SHUTDOWN_TIMEOUT_MS);
  });
});

describe('Dockerfile', () => {
  const dockerfile = fs.readFileSync(path.join(__dirname, '..', 'Dockerfile'), 'utf8');
  const omitted = (command: string) => (new RegExp(`npm ${command}[^\n]*`).exec(dockerfile)?.[0] ?? '').match(/--omit=\w+/g) ?? [];

  it('prunes away what its install left out: `npm prune` installs missing optional packages again', () => {
    // Without --omit=optional the prune put the embedded PostgreSQL (60 MB) back into the image.
    expect(omitted('ci')).toContain('--omit=optional');
    expect(omitted('prune')).toEqual(expect.arrayContaining(omitted('ci')));
  });
});

describe('package.json', () => {
  const { scripts } = JSON.parse(fs.readFileSync(path.join(__dirname, '..', 'package.json'), 'utf8')) as {
    scripts: Record<string, string>;
  };

  it("execs the node process of every script that runs one, so a supervisor's SIGTERM reaches it and not only npm's shell", () => {
    // Without exec the shell dies and node goes on, orphaned: a migration keeps its lock and its transaction open.
    const runsNode = Object.entries(scripts).filter(([, command]) => /(?:^|&&\s*)(?:exec\s+)?node\s/.test(command));
    expect(runsNode.filter(([, command]) => !/(?:^|&&\s*)exec\s+node\s/.test(command)).map(([name]) => name)).toEqual([]);
  });
});
