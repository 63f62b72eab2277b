import { spawn, type ChildProcess } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import readline from 'node:readline';
import { ConfigError, migrate, parseConfig, redactUrl } from '@assistant/shared';
import { ensureLocalServices } from './lib/local-services';

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

/** ADMIN_TOKEN from the environment, or one generated once into .data/admin-token (CONTRACT §2). */
function adminToken(): string {
  if (process.env.ADMIN_TOKEN?.trim()) return process.env.ADMIN_TOKEN.trim();
  const file = path.join(DATA_DIR, 'admin-token');
  if (!fs.existsSync(file)) {
    fs.mkdirSync(DATA_DIR, { recursive: true });
    fs.writeFileSync(file, `${randomBytes(24).toString('base64url')}\n`, { mode: 0o600 });
  }
  const token = fs.readFileSync(file, 'utf8').trim();
  say(`ADMIN_TOKEN was not set; using the one in .data/admin-token: ${token}`);
  return token;
}

/** Pino JSON lines become `12:00:01 INFO message {fields}` on a terminal; other lines pass through. */
function formatLine(line: string): string {
  if (!process.stdout.isTTY || !line.startsWith('{')) return line;
  try {
    const { time, level, msg, service: _s, name: _n, pid: _p, hostname: _h, ...rest } = JSON.parse(line) as Record<string, unknown>;
    const clock = new Date(Number(time)).toISOString().slice(11, 19);
    const extra = Object.keys(rest).length > 0 ? ` ${JSON.stringify(rest)}` : '';
    return `${clock} ${LEVELS[Number(level)] ?? level} ${String(msg ?? '')}${extra}`;
  } catch {
    return line;
  }
}

function pipe(stream: NodeJS.ReadableStream, service: string, out: NodeJS.WriteStream): void {
  const prefix = process.stdout.isTTY ? `\u001b[${COLORS[service]}m[${service}]\u001b[0m` : `[${service}]`;
  readline.createInterface({ input: stream }).on('line', (line) => out.write(`${prefix} ${formatLine(line)}\n`));
}

async function main(): Promise<void> {
  let config;
  try {
    config = parseConfig();
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
  const services = await ensureLocalServices(config, DATA_DIR, say);
  const env = { ...process.env, ...services.env, ADMIN_TOKEN: adminToken() };
  const databaseUrl = services.env.DATABASE_URL ?? config.DATABASE_URL;
  say(`migrating ${redactUrl(databaseUrl)}`);
  const applied = await migrate(databaseUrl);
  say(applied.length > 0 ? `applied ${applied.length} migrations` : 'database is up to date');
  if (config.LLM_PROVIDER === 'offline') {
    say('no model configured: using the offline planner (not a language model). Set OPENAI_API_KEY or OPENAI_BASE_URL for a real one.');
  }

  const children = new Map<string, ChildProcess>();
  let stopping = false;
  const launch = (service: (typeof SERVICES)[number], restarts = 0): void => {
    const child = spawn(process.execPath, [path.join(ROOT, 'services', service, 'dist', 'main.js')], {
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    children.set(service, child);
    pipe(child.stdout, service, process.stdout);
    pipe(child.stderr, service, process.stderr);
    const startedAt = Date.now();
    child.on('exit', (code, signal) => {
      children.delete(service);
      if (stopping) {
        if (children.size === 0) void services.stop().finally(() => process.exit(0));
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
  say(`gateway on http://localhost:${config.PORT} — Ctrl-C stops everything`);

  const stop = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    say(`${signal}: stopping ${[...children.keys()].join(', ')}`);
    for (const child of children.values()) child.kill('SIGTERM');
    if (children.size === 0) void services.stop().finally(() => process.exit(0));
    setTimeout(() => {
      for (const child of children.values()) child.kill('SIGKILL');
      process.exit(1);
    }, config.SHUTDOWN_TIMEOUT_MS + 5_000).unref();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
}

main().catch((error: unknown) => {
  process.stderr.write(`[start] ${redactUrl(error instanceof Error ? error.message : String(error))}\n`);
  process.exit(1);
});
