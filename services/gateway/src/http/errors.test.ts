import type { AddressInfo } from 'node:net';
import express, { Router } from 'express';
import { createLogger } from '@assistant/shared';
import { errorHandler, notFoundRoute } from './errors';

let url: string;
let server: ReturnType<express.Express['listen']>;

beforeAll(async () => {
  const app = express();
  // As admin.routes.ts mounts it: past its own prefix, inside a router of its own.
  app.use(Router().use('/v1/admin', notFoundRoute));
  app.use(notFoundRoute);
  app.use(errorHandler(createLogger('errors-test', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
});

describe('notFoundRoute', () => {
  it('names the whole path that has no route, wherever it is mounted', async () => {
    for (const path of ['/v1/admin/users/nope', '/nope/deeper']) {
      const res = await fetch(`${url}${path}`, { method: 'DELETE' });
      expect(res.status).toBe(404);
      expect(await res.json()).toEqual({ error: { code: 'not_found', message: `no route for DELETE ${path}` } });
    }
  });
});
