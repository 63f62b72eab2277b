import { createRuntime, createWorkerRedis, type Runtime } from '@assistant/shared';
import { createApp } from '../services/gateway/src/app';
import { toOpenApiPath } from '../services/gateway/src/openapi/openapi';
import { EventHub } from '../services/gateway/src/sse/event-hub';
import { Api } from '../scripts/lib/api';
import { TestSystem } from '../scripts/lib/system';

/**
 * /openapi.json cannot drift from the gateway: every route the express app serves under /v1 is
 * in it, nothing in it is missing from the app, and its example request is accepted.
 */
const system = new TestSystem();
let runtime: Runtime;
let relay: ReturnType<typeof createWorkerRedis>[] = [];
let served: { method: string; path: string }[];
let document: { paths: Record<string, Record<string, any>> };

/** The routes of an express 5 app: walk the router stack, nested routers included. */
function routesOf(stack: any[], prefix = ''): { method: string; path: string }[] {
  return stack.flatMap((layer) => {
    if (layer.route) {
      const paths: string[] = [layer.route.path].flat();
      const methods = Object.keys(layer.route.methods).filter((method) => method !== '_all');
      return paths.flatMap((path) => methods.map((method) => ({ method, path: prefix + path })));
    }
    if (Array.isArray(layer.handle?.stack)) {
      const mount = typeof layer.rawPath === 'string' && layer.rawPath !== '/' ? layer.rawPath : '';
      return routesOf(layer.handle.stack, prefix + mount);
    }
    return [];
  });
}

beforeAll(async () => {
  runtime = createRuntime('openapi-test');
  relay = [createWorkerRedis(runtime.config.REDIS_URL), createWorkerRedis(runtime.config.REDIS_URL)];
  const hub = new EventHub(runtime.config.QUEUE_PREFIX, relay[0] as (typeof relay)[0], relay[1] as (typeof relay)[0], runtime.logger);
  const app = createApp({ runtime, hub, heartbeatMs: 15_000 });
  served = routesOf((app as any).router.stack);
  await system.start({ services: ['gateway'] });
  const res = await fetch(`${system.url}/openapi.json`);
  expect(res.status).toBe(200);
  document = (await res.json()) as typeof document;
});

afterAll(async () => {
  await system.stop();
  await Promise.all(relay.map((connection) => connection.quit()));
  await runtime?.close();
});

it('lists every route the gateway serves under /v1', () => {
  const v1 = served.filter((route) => route.path.startsWith('/v1/'));
  // A sanity floor: the walk found the API, not an empty stack.
  expect(v1.length).toBeGreaterThanOrEqual(20);
  const missing = v1.filter((route) => !document.paths[toOpenApiPath(route.path)]?.[route.method]);
  expect(missing).toEqual([]);
});

it('describes no /v1 route the gateway does not serve', () => {
  const documented = Object.entries(document.paths)
    .filter(([path]) => path.startsWith('/v1/'))
    .flatMap(([path, operations]) => Object.keys(operations).map((method) => `${method} ${path}`));
  const servedKeys = new Set(served.map((route) => `${route.method} ${toOpenApiPath(route.path)}`));
  expect(documented.filter((key) => !servedKeys.has(key))).toEqual([]);
});

it('accepts a request built from the example of POST /v1/messages', async () => {
  const operation = document.paths['/v1/messages']?.post;
  const example = operation.requestBody.content['application/json'].example;
  expect(example).toEqual(expect.objectContaining({ text: expect.any(String) }));
  const user = await new Api(system.url).createUser(system.adminToken);
  const res = await user.post('/v1/messages', example);
  expect(res.status).toBe(202);
  expect(Object.keys(operation.responses)).toContain('202');
  expect(res.body).toEqual({
    turn_id: expect.any(String),
    session_key: example.session_key,
    events_url: `/v1/turns/${res.body.turn_id}/events`,
  });
});

it('serves the docs page and its assets from the local package', async () => {
  const page = await fetch(`${system.url}/docs`);
  expect(page.status).toBe(200);
  const html = await page.text();
  expect(html).toContain('/docs/swagger-ui-bundle.js');
  expect(html).not.toMatch(/https?:\/\//);
  for (const asset of ['/docs/swagger-ui-bundle.js', '/docs/swagger-ui.css', '/js/docs.js']) {
    expect((await fetch(`${system.url}${asset}`)).status).toBe(200);
  }
  // Only what the page needs: the package's own index points at a remote example API.
  expect((await fetch(`${system.url}/docs/swagger-initializer.js`)).status).toBe(404);
});
