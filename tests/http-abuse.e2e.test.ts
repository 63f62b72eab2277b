import net from 'node:net';
import { Api } from '../scripts/lib/api';
import { TestSystem } from '../scripts/lib/system';

/** Hostile and odd input to the HTTP API (docs/api.md#errors), against a real gateway. */
const system = new TestSystem();
let api: Api;

beforeAll(async () => {
  await system.start({ services: ['gateway'] });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
});

describe('PATCH /v1/preferences settings', () => {
  it('refuses a key named __proto__ with 400 and changes nothing; constructor and prototype are stored as plain keys', async () => {
    const user = await api.createUser(system.adminToken);
    const refused = await user.request('PATCH', '/v1/preferences', '{"max_iterations":7,"settings":{"__proto__":{"dm_scope":"x"},"a":1}}');
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      error: { code: 'validation_failed', details: [{ path: ['settings', '__proto__'], message: expect.stringContaining('__proto__') }] },
    });
    expect((await user.get('/v1/preferences')).body).toMatchObject({ max_iterations: 15, settings: {} });

    const plain = await user.request('PATCH', '/v1/preferences', '{"settings":{"constructor":{"prototype":{"x":1}},"prototype":2}}');
    expect(plain.status).toBe(200);
    expect((await user.get('/v1/preferences')).body.settings).toEqual({ constructor: { prototype: { x: 1 } }, prototype: 2 });
  });
});

/** Sends `request` as it is, bytes no HTTP client would send, and answers everything the gateway said. */
function rawRequest(request: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = net.connect(system.port, '127.0.0.1');
    let answer = '';
    socket.on('data', (chunk) => (answer += chunk.toString('utf8')));
    socket.on('end', () => resolve(answer));
    socket.on('error', reject);
    socket.write(request);
  });
}

describe('requests the HTTP parser refuses', () => {
  it('answer with the JSON error body too: a NUL in a header 400, headers over the limit 431', async () => {
    const user = await api.createUser(system.adminToken);
    const request = (header: string) =>
      rawRequest(`GET /v1/me HTTP/1.1\r\nHost: x\r\nAuthorization: Bearer ${user.apiKey}\r\n${header}\r\nConnection: close\r\n\r\n`);
    for (const [header, status, code] of [
      ['Last-Event-ID: 1\u00000', 400, 'bad_request'],
      [`X-Big: ${'a'.repeat(20_000)}`, 431, 'headers_too_large'],
    ] as const) {
      const answer = await request(header);
      expect(answer.split('\r\n')[0]).toBe(`HTTP/1.1 ${status} ${status === 400 ? 'Bad Request' : 'Request Header Fields Too Large'}`);
      expect(answer).toMatch(/\r\nContent-Type: application\/json; charset=utf-8\r\n/i);
      expect(JSON.parse(answer.slice(answer.indexOf('\r\n\r\n') + 4))).toEqual({ error: { code, message: expect.any(String) } });
    }
  });
});

describe('POST /v1/api-keys', () => {
  it('makes at most 100 keys an hour, revoked ones included (429 with Retry-After past it)', async () => {
    const user = await api.createUser(system.adminToken);
    for (let i = 0; i < 100; i += 1) {
      const created = await user.post('/v1/api-keys', {});
      expect(created.status).toBe(201);
      expect((await user.request('DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(204);
    }
    const refused = await user.post('/v1/api-keys', {});
    expect(refused.status).toBe(429);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(refused.body).toMatchObject({ error: { code: 'rate_limited' } });
    expect((await user.get('/v1/api-keys')).body).toHaveLength(1);
  });
});
