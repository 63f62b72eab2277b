import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import net from 'node:net';
import path from 'node:path';
import { waitFor, type WaitOptions } from './wait-for';

// Works from scripts/lib (ts-jest) and scripts/dist/lib (compiled).
const ROOT = path.resolve(__dirname, __dirname.includes(`${path.sep}dist${path.sep}`) ? '../../..' : '../..');
export type Service = 'gateway' | 'agent-worker' | 'tool-worker';
const SERVICES: Service[] = ['gateway', 'agent-worker', 'tool-worker'];

export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.listen(0, '127.0.0.1', () => {
      const { port } = server.address() as net.AddressInfo;
      server.close(() => resolve(port));
    });
    server.on('error', reject);
  });
}

export interface SystemOptions {
  env?: Record<string, string>;
  /** Which processes to start now (default: all three). */
  services?: Service[];
  /** Node options for every process (e.g. `--cpu-prof`, which NODE_OPTIONS refuses). */
  nodeArgs?: string[];
}

/**
 * The real processes (built JavaScript, as `npm run start:*` runs them) against the test run's
 * database, with a Redis key prefix of their own.
 */
export class TestSystem {
  readonly adminToken = `admin-${randomUUID()}`;
  readonly prefix = `${process.env.QUEUE_PREFIX ?? 'test'}-${randomUUID().slice(0, 8)}`;
  readonly processes = new Map<string, ChildProcess>();
  readonly logs: string[] = [];
  port = 0;
  private env: Record<string, string> = {};
  private nodeArgs: string[] = [];

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(options: SystemOptions = {}): Promise<this> {
    this.port = await freePort();
    this.env = {
      PATH: process.env.PATH ?? '',
      DATABASE_URL: process.env.DATABASE_URL as string,
      REDIS_URL: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379',
      QUEUE_PREFIX: this.prefix,
      PORT: String(this.port),
      ADMIN_TOKEN: this.adminToken,
      LOG_LEVEL: process.env.TEST_LOG_LEVEL ?? 'warn',
      JOB_LOCK_MS: '3000',
      SHUTDOWN_TIMEOUT_MS: '5000',
      ...options.env,
    };
    this.nodeArgs = options.nodeArgs ?? [];
    for (const service of options.services ?? SERVICES) this.spawn(service);
    if ((options.services ?? SERVICES).includes('gateway')) await this.waitReady();
    return this;
  }

  spawn(service: Service, extraEnv: Record<string, string> = {}, name: string = service): ChildProcess {
    const child = spawn(process.execPath, [...this.nodeArgs, path.join(ROOT, 'services', service, 'dist', 'main.js')], {
      env: { ...this.env, ...extraEnv },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const keep = (chunk: Buffer) => this.logs.push(`[${name}] ${chunk.toString('utf8')}`);
    child.stdout?.on('data', keep);
    child.stderr?.on('data', keep);
    this.processes.set(name, child);
    return child;
  }

  /** waitFor, with the processes' latest logs in its error. */
  waitFor<T>(check: () => T | Promise<T>, what: string, options: WaitOptions = {}): Promise<NonNullable<T>> {
    return waitFor(check, what, { detail: () => this.logs.join('').slice(-4_000), ...options });
  }

  async waitReady(timeoutMs = 20_000): Promise<void> {
    await waitFor(async () => (await fetch(`${this.url}/readyz`).catch(() => undefined))?.status === 200, 'gateway ready', {
      timeoutMs,
      detail: () => this.logs.join(''),
    });
  }

  /** Sends a signal and waits for the process to exit; returns its exit code. */
  async signal(name: string, signal: NodeJS.Signals): Promise<number | null> {
    const child = this.processes.get(name);
    if (!child || child.exitCode !== null || child.signalCode !== null) return child?.exitCode ?? null;
    const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
    child.kill(signal);
    const code = await exited;
    this.processes.delete(name);
    // A process that did not drain cleanly says why in its log (e.g. the step its deadline cut).
    if (code !== 0 && signal !== 'SIGKILL')
      process.stderr.write(`${name} exited ${code} on ${signal}:\n${this.logs.filter((line) => line.startsWith(`[${name}]`)).join('')}`);
    return code;
  }

  /** Starts every process again with the same settings (same port, database and prefix). */
  async restart(): Promise<void> {
    await this.stop();
    for (const service of SERVICES) this.spawn(service);
    await this.waitReady();
  }

  async stop(): Promise<void> {
    await Promise.all([...this.processes.keys()].map((name) => this.signal(name, 'SIGTERM')));
  }
}
