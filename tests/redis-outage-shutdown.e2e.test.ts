import { createServer, type AddressInfo, type Server, type Socket } from 'node:net';
import { freePort, TestSystem } from '../scripts/lib/system';

/**
 * A supervisor stops processes while Redis is down (a restart during an outage): with nothing
 * able to finish, each must exit 0 at once instead of waiting out SHUTDOWN_TIMEOUT_MS for a Redis
 * that does not come back, and being counted as a failed stop. Down means refusing connections,
 * or taking them and never answering (overloaded, or cut off by the network mid-way).
 */
const sockets: Socket[] = [];
let hung: Server;

beforeAll(async () => {
  hung = createServer((socket) => sockets.push(socket)).listen(0, '127.0.0.1');
  await new Promise((resolve) => hung.once('listening', resolve));
});

afterAll(() => {
  for (const socket of sockets) socket.destroy();
  hung.close();
});

describe.each([
  ['refuses connections', async () => freePort()],
  ['never answers', async () => (hung.address() as AddressInfo).port],
])('while Redis %s', (_down, redisPort) => {
  it.each(['gateway', 'agent-worker', 'tool-worker'] as const)(
    'lets the %s exit 0 on SIGTERM',
    async (service) => {
      const system = await new TestSystem().start({
        env: { REDIS_URL: `redis://127.0.0.1:${await redisPort()}`, SHUTDOWN_TIMEOUT_MS: '60000', LOG_LEVEL: 'info' },
        services: [],
      });
      system.spawn(service);
      try {
        await system.waitFor(() => /started|listening/.test(system.logs.join('')), `${service} started`);
        expect(await system.signal(service, 'SIGTERM')).toBe(0);
      } finally {
        await system.stop();
      }
    },
    90_000,
  );
});
