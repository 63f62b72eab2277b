import { Api } from '../scripts/lib/api';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/** Deciding approvals over HTTP (docs/api.md#approvals): what a client is told. */
const model = new FakeModel();
const system = new TestSystem();
let api: Api;

beforeAll(async () => {
  await model.start();
  // One model step plans a folder per comma-separated name: in manual mode each waits for approval.
  model.script = (body) =>
    afterTools(body)
      ? { content: 'Done.' }
      : {
          toolCalls: userText(body)
            .split(',')
            .map((name, i) => ({ name: 'create_folder', arguments: { name }, id: `call_${i}` })),
        };
  await system.start({ env: { OPENAI_BASE_URL: model.url } });
  api = new Api(system.url);
});

afterAll(async () => {
  await system.stop();
  await model.stop();
});

async function pendingApprovals(user: Api, count: number) {
  return system.waitFor(async () => {
    const listed = await user.get<{ id: string; task_id: string }[]>('/v1/approvals?status=pending');
    return listed.body.length === count ? listed.body : undefined;
  }, `${count} pending approvals`);
}

describe('deciding an approval twice', () => {
  it('answers 409 saying what the approval already is', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('Kept,Dropped');
    const [kept, dropped] = await pendingApprovals(user, 2);
    expect((await user.post(`/v1/approvals/${kept?.id}`, { decision: 'approve' })).status).toBe(200);
    expect((await user.post(`/v1/approvals/${dropped?.id}`, { decision: 'reject' })).status).toBe(200);
    await user.events(turnId);

    const again = await user.post(`/v1/approvals/${kept?.id}`, { decision: 'reject' });
    expect(again.status).toBe(409);
    expect(again.body.error).toMatchObject({
      code: 'conflict',
      message: 'the approval was already approved',
      details: { status: 'approved' },
    });
    const twice = await user.post(`/v1/approvals/${dropped?.id}`, { decision: 'approve' });
    expect(twice.body.error).toMatchObject({ message: 'the approval was already rejected', details: { status: 'rejected' } });
  });
});
