import net from 'node:net';
import { parseConfig } from './env';
import { createRuntime, type Runtime } from './runtime';

/** A TCP proxy to PostgreSQL that holds each of its answers `delayMs` once `delayMs` is set. */
class SlowPostgres {
  delayMs = 0;
  private readonly server = net.createServer((client) => {
    const upstream = net.connect(Number(this.target.port), this.target.hostname);
    client.pipe(upstream);
    upstream.on('data', (chunk) => {
      // Equal delays fire in the order they were set, so the answers keep their order.
      if (this.delayMs === 0) client.write(chunk);
      else setTimeout(() => client.write(chunk), this.delayMs);
    });
    const end = () => {
      client.destroy();
      upstream.destroy();
    };
    client.on('error', end).on('close', end);
    upstream.on('error', end).on('close', end);
  });

  constructor(private readonly target: URL) {}

  async start(): Promise<URL> {
    await new Promise<void>((resolve) => this.server.listen(0, '127.0.0.1', resolve));
    const { port } = this.server.address() as net.AddressInfo;
    return Object.assign(new URL(this.target.href), { hostname: '127.0.0.1', port: String(port) });
  }

  async stop(): Promise<void> {
    await new Promise((resolve) => this.server.close(resolve));
  }
}

describe('checkReady', () => {
  const proxy = new SlowPostgres(new URL(process.env.DATABASE_URL as string));
  let runtime: Runtime;

  beforeAll(async () => {
    const databaseUrl = await proxy.start();
    runtime = createRuntime('runtime-test', parseConfig({ ...process.env, DATABASE_URL: databaseUrl.href }));
  });

  afterAll(async () => {
    await runtime.close();
    await proxy.stop();
  });

  it('names PostgreSQL when its answers together take over 1 s, though each came within 1 s', async () => {
    // One open connection, and Redis up: only PostgreSQL's answers are slow.
    await runtime.db.query('SELECT 1');
    await runtime.redis.ping();
    // The ping and the migrations check each wait 600 ms for their answer.
    proxy.delayMs = 600;
    await expect(runtime.checkReady()).rejects.toThrow('not ready: postgresql did not answer');
  });
});
