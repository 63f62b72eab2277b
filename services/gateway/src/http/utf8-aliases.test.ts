import type { AddressInfo } from 'node:net';
import express from 'express';
import { createLogger } from '@assistant/shared';
import { errorHandler } from './errors';
import { acceptUtf8Aliases } from './utf8-aliases';

let url: string;
let server: ReturnType<express.Express['listen']>;

beforeAll(async () => {
  const app = express().use(acceptUtf8Aliases, express.json({ type: () => true }));
  app.post('/echo', (req, res) => {
    res.json(req.body);
  });
  app.use(errorHandler(createLogger('utf8-aliases-test', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(() => {
  server.close();
});

const post = (contentType: string) =>
  fetch(`${url}/echo`, { method: 'POST', headers: { 'content-type': contentType }, body: '{"text":"olá"}' });

it('reads a body whose charset is spelt utf8, or is ASCII, as UTF-8', async () => {
  for (const type of [
    'application/json; charset=utf8',
    'application/json;charset="UTF8"',
    'text/plain; charset=us-ascii',
    'application/json; charset=utf-8',
  ]) {
    const res = await post(type);
    expect({ type, status: res.status, body: await res.json() }).toEqual({ type, status: 200, body: { text: 'olá' } });
  }
});

it('still refuses a charset that is not UTF-8', async () => {
  const res = await post('application/json; charset=iso-8859-1');
  expect(res.status).toBe(400);
  expect(((await res.json()) as { error: { code: string } }).error.code).toBe('unsupported_encoding');
});
