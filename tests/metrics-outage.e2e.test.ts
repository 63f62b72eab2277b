import { freePort, TestSystem } from '../scripts/lib/system';

/**
 * /metrics during a Redis outage: the gateway's own metrics (HTTP requests, process) are what an
 * operator watches then, so they are still served; only the series read from Redis are left out.
 */
it('serves the gateway’s own metrics while Redis does not answer', async () => {
  const system = await new TestSystem().start({ env: { REDIS_URL: `redis://127.0.0.1:${await freePort()}` }, services: [] });
  system.spawn('gateway');
  try {
    await system.waitFor(async () => (await fetch(`${system.url}/healthz`).catch(() => undefined))?.ok, 'gateway listening');
    expect((await fetch(`${system.url}/readyz`)).status).toBe(503);

    const res = await fetch(`${system.url}/metrics`);
    const text = await res.text();
    expect({ status: res.status, type: res.headers.get('content-type') }).toEqual({
      status: 200,
      type: 'text/plain; version=0.0.4; charset=utf-8',
    });
    expect(text).toMatch(/^assistant_http_requests_total\{method="GET",route="\/readyz",status="503"\} 1$/m);
    expect(text).not.toMatch(/^assistant_queue_jobs\{/m);
  } finally {
    await system.stop();
  }
});
