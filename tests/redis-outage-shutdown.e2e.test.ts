import { freePort, TestSystem } from '../scripts/lib/system';

/**
 * A supervisor stops processes while Redis is down (a restart during an outage): with nothing
 * able to finish, each must exit 0 at once instead of waiting out SHUTDOWN_TIMEOUT_MS for a Redis
 * that does not come back, and being counted as a failed stop.
 */
it.each(['gateway', 'agent-worker', 'tool-worker'] as const)(
  'lets the %s exit 0 on SIGTERM while Redis does not answer',
  async (service) => {
    const system = await new TestSystem().start({
      // Nothing listens there: every connection is refused.
      env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}`, SHUTDOWN_TIMEOUT_MS: '60000' },
      services: [],
    });
    system.spawn(service);
    try {
      await system.waitFor(() => /ECONNREFUSED/.test(system.logs.join('')), `${service} trying Redis`);
      expect(await system.signal(service, 'SIGTERM')).toBe(0);
    } finally {
      await system.stop();
    }
  },
  90_000,
);
