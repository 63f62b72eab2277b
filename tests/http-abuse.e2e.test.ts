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
