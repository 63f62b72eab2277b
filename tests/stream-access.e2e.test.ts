import { Api } from '../scripts/lib/api';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/** An open event stream ends once the access it was opened with does (docs/events.md#limits). */
const model = new FakeModel();
const system = new TestSystem();
let api: Api;

beforeAll(async () => {
  await model.start();
  // Every message plans one change, so in manual mode its turn waits for approval with its streams open.
  model.script = (body) =>
    afterTools(body) ? { content: 'Done.' } : { toolCalls: [{ name: 'create_folder', arguments: { name: userText(body) } }] };
  // A heartbeat a second: a stream whose access ended ends within one.
  await system.start({ env: { OPENAI_BASE_URL: model.url, SSE_HEARTBEAT_MS: '1000' } });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await model.stop();
});

/** A turn waiting for approval, and a stream of it that stays open. */
async function waitingTurn(user: Api, text: string): Promise<string> {
  const { turn_id } = await user.send(text);
  await user.events(turn_id, { until: (event) => event.event === 'tool_approval_request' });
  return turn_id;
}

async function openStream(user: Api, turnId: string): Promise<Response> {
  const res = await fetch(`${system.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${user.apiKey}` } });
  expect(res.status).toBe(200);
  return res;
}

describe('open event streams', () => {
  it('end when the key they were opened with is revoked; those of the user’s other keys go on', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Revoker' });
    const turnId = await waitingTurn(user, 'Watched folder');
    const created = await user.post<{ id: string; api_key: string }>('/v1/api-keys', { name: 'lost phone' });
    const [onPhone, kept] = await Promise.all([openStream(api.as(created.body.api_key), turnId), openStream(user, turnId)]);

    expect((await user.request('DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(204);
    // Resolves once the gateway ends the stream (within a heartbeat).
    const seen = await onPhone.text();
    expect(seen).toContain('event: tool_approval_request');
    expect(seen).not.toContain('event: done');

    const [approval] = (await user.get<{ id: string }[]>('/v1/approvals?status=pending')).body;
    expect((await user.post(`/v1/approvals/${approval?.id}`, { decision: 'approve' })).status).toBe(200);
    expect(await kept.text()).toContain('event: done');
  });

  it('end when their user is disabled', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Disabled' });
    const turnId = await waitingTurn(user, 'Folder of a disabled user');
    const stream = await openStream(user, turnId);
    const admin = new Api(system.url, system.adminToken);
    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { disabled: true })).status).toBe(200);
    expect(await stream.text()).not.toContain('event: done');
  });
});
