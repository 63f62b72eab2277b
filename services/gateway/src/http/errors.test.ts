import { createServer, type AddressInfo, type Socket } from 'node:net';
import express, { Router } from 'express';
import { Redis } from 'ioredis';
import { createLogger } from '@assistant/shared';
import { requireAdmin } from './auth';
import { errorHandler, notFoundRoute } from './errors';

const logger = createLogger('errors-test', 'silent');
const logged = jest.spyOn(logger, 'error');
let url: string;
let server: ReturnType<express.Express['listen']>;
// A Redis that accepts connections and never answers (overloaded, or cut off mid-way).
const hungSockets: Socket[] = [];
const hungRedis = createServer((socket) => hungSockets.push(socket));
let redis: Redis;

beforeAll(async () => {
  const app = express();
  app.get('/admin', requireAdmin(undefined));
  app.post('/body', express.json(), (_req, res) => {
    res.json({});
  });
  app.get('/broken', () => {
    throw new Error('connection string postgres://secret@db');
  });
  // A backing service that cannot be reached, as pg and ioredis report it.
  app.get('/down/:code', (req) => {
    throw Object.assign(new Error(`connect ${req.params.code} db:5432`), { code: req.params.code });
  });
  hungRedis.listen(0, '127.0.0.1');
  await new Promise((resolve) => hungRedis.once('listening', resolve));
  redis = new Redis({ port: (hungRedis.address() as AddressInfo).port, host: '127.0.0.1', commandTimeout: 100, maxRetriesPerRequest: 1 });
  redis.on('error', () => undefined);
  app.get('/hung', async () => {
    await redis.get('anything');
  });
  // As admin.routes.ts mounts it: past its own prefix, inside a router of its own.
  app.use(Router().use('/v1/admin', notFoundRoute));
  app.use(notFoundRoute);
  app.use(errorHandler(logger));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

beforeEach(() => logged.mockClear());

afterAll(() => {
  server.close();
  redis.disconnect();
  for (const socket of hungSockets) socket.destroy();
  hungRedis.close();
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

describe('errorHandler', () => {
  it('logs an unexpected error and answers 500 without its text', async () => {
    const res = await fetch(`${url}/broken`);
    expect(res.status).toBe(500);
    expect(await res.json()).toEqual({ error: { code: 'internal', message: 'something went wrong on our side' } });
    expect(logged).toHaveBeenCalledTimes(1);
  });

  it('answers 503 when PostgreSQL or Redis cannot be reached, including by a host name that does not resolve', async () => {
    for (const code of ['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'EHOSTUNREACH']) {
      const res = await fetch(`${url}/down/${code}`);
      expect(res.status).toBe(503);
      expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unavailable');
    }
  });

  it('answers 503 when Redis accepts the connection but never answers', async () => {
    const res = await fetch(`${url}/hung`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unavailable');
  });

  it('answers the 503 of an unset ADMIN_TOKEN without logging it as a failure', async () => {
    const res = await fetch(`${url}/admin`);
    expect(res.status).toBe(503);
    expect(((await res.json()) as { error: { code: string } }).error.code).toBe('admin_disabled');
    expect(logged).not.toHaveBeenCalled();
  });

  it('answers a body compressed in a way the parser cannot read with 400 naming the compression, not the charset', async () => {
    const res = await fetch(`${url}/body`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', 'content-encoding': 'compress' },
      body: '{}',
    });
    expect(res.status).toBe(400);
    expect(await res.json()).toEqual({
      error: { code: 'unsupported_encoding', message: 'the request body must be sent uncompressed or with gzip, deflate or br' },
    });
  });
});
