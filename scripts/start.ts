import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import path from 'node:path';
import readline from 'node:readline';
import { ConfigError, migrate, parseConfig, redactUrl, type Config } from '@assistant/shared';
import { ensureLocalServices, readStartSettings, type StartSettings } from './lib/local-services';

/**
 * `npm start`: migrate, then run the gateway, the agent worker and the tool worker as separate
 * processes with prefixed logs; restart one that dies; stop them all on Ctrl-C.
 */
const ROOT = path.resolve(__dirname, '../..');
const DATA_DIR = path.join(ROOT, '.data');
const SERVICES = ['gateway', 'agent-worker', 'tool-worker'] as const;
const COLORS: Record<string, string> = { gateway: '36', 'agent-worker': '35', 'tool-worker': '33' };
const LEVELS: Record<number, string> = { 10: 'TRACE', 20: 'DEBUG', 30: 'INFO', 40: 'WARN', 50: 'ERROR', 60: 'FATAL' };

function say(message: string): void {
  process.stdout.write(`[start] ${message}\n`);
}

/** ADMIN_TOKEN from the environment, or one generated once into .data/admin-token (README.md#running-it). */
function adminToken(dataDir: string): string {
  if (process.env.ADMIN_TOKEN?.trim()) return process.env.ADMIN_TOKEN.trim();
  const file = path.join(dataDir, 'admin-token');
  let token = fs.existsSync(file) ? fs.readFileSync(file, 'utf8').trim() : '';
  // An empty file (a write cut short by a full disk, say) would leave the admin endpoints off for good.
  if (!token) {
    token = randomBytes(24).toString('base64url');
    fs.mkdirSync(dataDir, { recursive: true });
    fs.writeFileSync(file, `${token}\n`, { mode: 0o600 });
  }
  const shown = path.relative(ROOT, file).startsWith('..') ? file : path.relative(ROOT, file);
  say(`ADMIN_TOKEN was not set; using the one in ${shown}: ${token}`);
  return token;
}

/** Pino JSON lines become `12:00:01 INFO message {fields}` on a terminal; other lines pass through. */
function formatLine(line: string): string {
  if (!process.stdout.isTTY || !line.startsWith('{')) return line;
  try {
    const {
      time,
      level,
      msg,
      service: _s,
      name: _n,
      pid: _p,
      hostname: _h,
      ...rest
    } = JSON.parse(line) as { msg?: string } & Record<string, unknown>;
    const clock = new Date(Number(time)).toISOString().slice(11, 19);
    const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
    return `${clock} ${LEVELS[Number(level)] ?? String(level)} ${msg ?? ''}${extra}`;
  } catch {
    return line;
  }
}

function pipe(stream: NodeJS.ReadableStream, service: string, out: NodeJS.WriteStream): void {
  const prefix = process.stdout.isTTY ? `\u001b[${COLORS[service]}m[${service}]\u001b[0m` : `[${service}]`;
  readline.createInterface({ input: stream }).on('line', (line) => out.write(`${prefix} ${formatLine(line)}\n`));
}

/**
 * A process of its own that stops everything npm start ran if npm start dies without doing it
 * (kill -9, a crash): see scripts/reaper.ts.
 */
function startReaper(): ChildProcess {
  const reaper = spawn(process.execPath, [path.join(__dirname, 'reaper.js')], {
    detached: true,
    stdio: ['ignore', 'ignore', 'ignore', 'ipc'],
  });
  reaper.on('error', () => undefined);
  reaper.unref();
  reaper.channel?.unref();
  return reaper;
}

let cleanUp: (() => Promise<void>) | undefined;

/** The processes' settings and npm start's own: every problem with either, one line each, stops it. */
function readSettingsOrExit(): { config: Config; settings: StartSettings } {
  const problems: string[] = [];
  const read = <T>(parse: () => T): T | undefined => {
    try {
      return parse();
    } catch (error) {
      if (!(error instanceof ConfigError)) throw error;
      problems.push(...error.problems);
      return undefined;
    }
  };
  const config = read(() => parseConfig());
  const settings = read(() => readStartSettings());
  if (config && settings) return { config, settings };
  process.stderr.write(`${new ConfigError(problems).message}\n`);
  process.exit(1);
}

/**
 * The port the gateway will listen on: `port` if it can (one that cannot would be restarted
 * forever), or for PORT=0 one the system chooses now, so that the address printed stays the
 * gateway's across its restarts.
 */
async function gatewayPort(port: number): Promise<number | undefined> {
  const probe = createServer();
  return new Promise((resolve) => {
    probe.once('error', () => resolve(undefined));
    probe.listen(port, () => {
      const { port: chosen } = probe.address() as AddressInfo;
      probe.close(() => resolve(chosen));
    });
  });
}

async function main(): Promise<void> {
  const { config, settings } = readSettingsOrExit();
  const port = await gatewayPort(config.PORT);
  if (port === undefined) {
    process.stderr.write(`[start] PORT ${config.PORT} is taken by another program (or not allowed): stop it or set PORT\n`);
    process.exit(1);
  }
  const dataDir = settings.START_DATA_DIR ? path.resolve(settings.START_DATA_DIR) : DATA_DIR;
  // When the terminal goes away (SIGHUP), writing to it fails: that must not stop the shutdown.
  process.stdout.on('error', () => undefined);
  process.stderr.on('error', () => undefined);

  const reaper = startReaper();
  const children = new Map<string, ChildProcess>();
  const deadlineMs = config.SHUTDOWN_TIMEOUT_MS + 5_000;
  let servers: number[] = [];
  const report = () => {
    const services = [...children.values()].map((child) => child.pid).filter((pid): pid is number => pid !== undefined);
    if (reaper.connected) reaper.send({ services, servers, deadlineMs }, () => undefined);
  };

  const services = await ensureLocalServices(config, { ...settings, dataDir }, say);
  let stopServers = async () => {
    stopServers = async () => undefined;
    await services.stop();
    if (reaper.connected) reaper.send({ done: true }, () => undefined);
  };
  cleanUp = () => stopServers();
  servers = services.pids;
  report();
  const env = { ...process.env, ...services.env, ADMIN_TOKEN: adminToken(dataDir), PORT: String(port) };
  const databaseUrl = services.env.DATABASE_URL ?? config.DATABASE_URL;
  say(`migrating ${redactUrl(databaseUrl)}`);
  const applied = await migrate(databaseUrl);
  say(applied.length > 0 ? `applied ${applied.length} migrations` : 'database is up to date');
  if (config.LLM_PROVIDER === 'offline') {
    say('no model configured: using the offline planner (not a language model). Set OPENAI_API_KEY or OPENAI_BASE_URL for a real one.');
  }

  let stopping = false;
  let finishing = false;
  const finish = (code: number) => {
    if (finishing) return;
    finishing = true;
    void stopServers().finally(() => process.exit(code));
  };
  const launch = (service: (typeof SERVICES)[number], restarts = 0): void => {
    if (stopping) return;
    const child = spawn(process.execPath, [path.join(ROOT, 'services', service, 'dist', 'main.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.set(service, child);
    report();
    pipe(child.stdout, service, process.stdout);
    pipe(child.stderr, service, process.stderr);
    const startedAt = Date.now();
    child.on('exit', (code, signal) => {
      children.delete(service);
      if (stopping) {
        if (children.size === 0) finish(0);
        return;
      }
      // A process that ran a while before dying starts again at once; one that keeps dying backs off.
      const next = Date.now() - startedAt > 30_000 ? 0 : restarts + 1;
      const delay = Math.min(500 * 2 ** next, 15_000);
      say(`${service} exited (${signal ?? `code ${code}`}); restarting in ${delay} ms`);
      setTimeout(() => launch(service, next), delay).unref();
    });
  };
  for (const service of SERVICES) launch(service);
  say(`gateway on http://localhost:${port} — Ctrl-C stops everything`);

  // Ctrl-C, kill, docker stop, systemd, a closed terminal: each drains the processes, then stops the servers.
  const stop = (reason: string) => {
    if (stopping) return;
    stopping = true;
    say(`${reason}: stopping ${[...children.keys()].join(', ')}`);
    for (const child of children.values()) child.kill('SIGTERM');
    if (children.size === 0) finish(0);
    setTimeout(() => {
      for (const child of children.values()) child.kill('SIGKILL');
      finish(1);
    }, deadlineMs).unref();
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, () => stop(signal));
  // npm forwards SIGINT and SIGTERM but dies of SIGHUP or kill -9 alone: an orphaned npm start stops too.
  const parent = process.ppid;
  setInterval(() => {
    if (process.ppid !== parent) stop('the parent process exited');
  }, 500).unref();
}

main().catch(async (error: unknown) => {
  process.stderr.write(`[start] ${redactUrl(error instanceof Error ? error.message : String(error))}\n`);
  await cleanUp?.().catch(() => undefined);
  process.exit(1);
});
