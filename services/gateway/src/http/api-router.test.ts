import type { AddressInfo } from 'node:net';
import express from 'express';
import { z } from 'zod';
import { createLogger } from '@assistant/shared';
import { defineRoutes } from '../openapi/api-route';
import { apiRouter } from './api-router';
import { errorHandler } from './errors';
import { uuidParam } from './validate';

const routes = defineRoutes({
  item: {
    method: 'post',
    path: '/items/:id/:slot',
    tag: 'test',
    summary: 'echo',
    auth: 'none',
    params: { id: uuidParam, slot: z.enum(['a', 'b']) },
    notFound: 'item',
    query: z.object({ n: z.coerce.number<string>().int().optional() }),
    body: z.strictObject({ text: z.string() }),
    responses: { 200: { description: 'echo' } },
  },
  section: {
    method: 'get',
    path: '/sections/:name',
    tag: 'test',
    summary: 'echo',
    auth: 'none',
    params: { name: z.enum(['a', 'b']) },
    responses: { 200: { description: 'echo' } },
  },
});

const ID = '00000000-0000-4000-8000-000000000000';
let url: string;
let server: ReturnType<express.Express['listen']>;

beforeAll(async () => {
  const app = express().use(express.json());
  app.use(
    apiRouter(routes, {
      item: {
        use: [(req, res, next) => (req.get('x-stop') ? res.status(429).end() : next())],
        handle: (_req, res, input) => {
          res.json(input);
        },
      },
      section: (_req, res, { params }) => {
        res.json(params);
      },
    }),
  );
  app.use(errorHandler(createLogger('api-router-test', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
});

const post = (path: string, body: unknown, headers: Record<string, string> = {}) =>
  fetch(`${url}${path}`, { method: 'POST', headers: { 'content-type': 'application/json', ...headers }, body: JSON.stringify(body) });

describe('apiRouter', () => {
  it('hands the handler its parameters, query and body parsed with the route schemas', async () => {
    const res = await post(`/items/${ID}/a?n=3`, { text: 'hi' });
    expect(await res.json()).toEqual({ params: { id: ID, slot: 'a' }, query: { n: 3 }, body: { text: 'hi' } });
  });

  it('answers 404 for a path parameter of a route that names what it finds, 400 otherwise', async () => {
    const notUuid = await post('/items/42/a', { text: 'hi' });
    expect([notUuid.status, await notUuid.json()]).toEqual([404, { error: { code: 'not_found', message: 'item not found' } }]);
    const section = await fetch(`${url}/sections/c`);
    expect(section.status).toBe(400);
    expect(((await section.json()) as { error: { details: { path: unknown[] }[] } }).error.details[0]?.path).toEqual([]);
  });

  it('refuses a bad query or body with 400, after the middleware has run', async () => {
    expect((await post(`/items/${ID}/a?n=x`, { text: 'hi' })).status).toBe(400);
    expect((await post(`/items/${ID}/a`, { text: 1 })).status).toBe(400);
    expect((await post(`/items/${ID}/a`, { text: 1 }, { 'x-stop': '1' })).status).toBe(429);
  });

  it('does not compile without a handler for every route, or with one for a route it does not have', () => {
    const handle = () => undefined;
    // @ts-expect-error: `section` has no handler
    expect(() => apiRouter(routes, { item: handle })).toThrow(/no handler for the route section/);
    // @ts-expect-error: `other` is not a route
    expect(apiRouter(routes, { item: handle, section: handle, other: handle })).toBeDefined();
  });
});
