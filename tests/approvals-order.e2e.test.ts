import { Api } from '../scripts/lib/api';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/** `GET /v1/approvals` lists approvals oldest first (docs/api.md#approvals). */
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

describe('the approvals list', () => {
  it("keeps one step's approvals in their tasks' order once some are decided", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Orderly' });
    const { turn_id } = await user.send('North,South,East');
    const pending = await system.waitFor(async () => {
      const listed = await user.get<{ id: string; task_id: string }[]>('/v1/approvals?status=pending');
      return listed.body.length === 3 ? listed.body : undefined;
    }, 'three pending approvals');

    // Deciding the middle one rewrites its row: the list must not follow where rows sit on disk.
    const middle = pending.find((approval) => approval.task_id === 'task_2');
    expect((await user.post(`/v1/approvals/${middle?.id}`, { decision: 'approve' })).status).toBe(200);

    const listed = await user.get<{ turn_id: string; task_id: string }[]>('/v1/approvals');
    expect(listed.body.map((approval) => [approval.turn_id, approval.task_id])).toEqual([
      [turn_id, 'task_1'],
      [turn_id, 'task_2'],
      [turn_id, 'task_3'],
    ]);
  });
});
