import type pg from 'pg';
import { Api, type ApiResponse } from '../scripts/lib/api';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { testDb } from './helpers/db';

/** Deciding approvals over HTTP (docs/api.md#approvals): what a client is told. */
const A_UUID = '123e4567-e89b-42d3-a456-426614174000';
const model = new FakeModel();
const system = new TestSystem();
let api: Api;
let db: pg.Pool;

beforeAll(async () => {
  await model.start();
  // One model step plans a folder per comma-separated name: in manual mode each waits for approval.
  // The model may put a UUID where the user wrote UUID (the user's own text reaches it without one).
  model.script = (body) =>
    afterTools(body)
      ? { content: 'Done.' }
      : {
          toolCalls: userText(body)
            .split(',')
            .map((name, i) => ({ name: 'create_folder', arguments: { name: name.replace('UUID', A_UUID) }, id: `call_${i}` })),
        };
  await system.start({ env: { OPENAI_BASE_URL: model.url } });
  api = new Api(system.url);
  db = testDb();
});

afterAll(async () => {
  await db.end();
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

describe('the approvals list', () => {
  it('shows the arguments as the tool_approval_request event did, without a UUID', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('Plan UUID');
    const [request] = await user
      .events(turnId, { until: (event) => event.event === 'tool_approval_request' })
      .then((events) => events.slice(-1));
    const [approval] = await pendingApprovals(user, 1);
    expect(approval).toMatchObject({ id: request?.data.approval_id, arguments: { name: 'Plan [hidden id]' } });
    expect(approval).toMatchObject({ arguments: request?.data.arguments });
  });
});

describe('an approval past its expiry before the expiry job has run', () => {
  it('reads expired, decided when it expired, before and after a decision answers 409', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('Overdue');
    const [approval] = await pendingApprovals(user, 1);
    // Its job is due in APPROVAL_TTL_SECONDS (a day): only its expiry is moved into the past.
    const moved = await db.query<{ expires_at: Date }>(
      `UPDATE approvals SET expires_at = NOW() - INTERVAL '1 minute' WHERE id = $1 RETURNING expires_at`,
      [approval?.id],
    );
    const expiredAt = moved.rows[0]?.expires_at.toISOString();
    const listed = (await user.get('/v1/approvals')).body;
    expect(listed).toEqual([
      expect.objectContaining({ id: approval?.id, status: 'expired', expires_at: expiredAt, decided_at: expiredAt }),
    ]);
    expect((await user.get('/v1/approvals?status=pending')).body).toEqual([]);

    const late = await user.post(`/v1/approvals/${approval?.id}`, { decision: 'approve' });
    expect([late.status, late.body.error?.details]).toEqual([409, { status: 'expired' }]);
    expect((await user.events(turnId)).at(-1)?.data.status).toBe('completed');
    expect((await user.get('/v1/approvals')).body).toEqual(listed);
  });
});

describe('the approvals list in pages', () => {
  it('gives at most limit approvals, oldest first, and the rest behind its Link, filter kept', async () => {
    const user = await api.createUser(system.adminToken);
    await user.send('First,Second,Third,Fourth,Fifth');
    const all = await pendingApprovals(user, 5);
    expect((await user.get('/v1/approvals?status=pending')).headers.get('link')).toBeNull();
    const pages: { id: string }[][] = [];
    for (let next: string | undefined = '/v1/approvals?status=pending&limit=2'; next;) {
      const page: ApiResponse<{ id: string }[]> = await user.get<{ id: string }[]>(next);
      pages.push(page.body);
      next = /^<([^>]+)>; rel="next"$/.exec(page.headers.get('link') ?? '')?.[1];
      if (next) expect(next).toContain('status=pending');
    }
    expect(pages.map((page) => page.length)).toEqual([2, 2, 1]);
    expect(pages.flat().map((approval) => approval.id)).toEqual(all.map((approval) => approval.id));
    expect((await user.get('/v1/approvals?limit=0')).status).toBe(400);
    expect((await user.get('/v1/approvals?after=yesterday')).status).toBe(400);
  });

  it("answers 400 for a cursor that names no approval of the user's, another user's included", async () => {
    const user = await api.createUser(system.adminToken);
    await user.send('Theirs');
    const [theirs] = await pendingApprovals(user, 1);
    const other = await api.createUser(system.adminToken);
    for (const after of [theirs?.id, A_UUID]) {
      const res = await other.get(`/v1/approvals?after=${after}`);
      expect([res.status, res.body.error]).toEqual([
        400,
        expect.objectContaining({ code: 'validation_failed', details: [expect.objectContaining({ path: ['after'] })] }),
      ]);
    }
  });
});

describe('changing autonomous_mode while a turn waits', () => {
  it('leaves the waiting approval to be decided as before', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('Waiting');
    const [approval] = await pendingApprovals(user, 1);
    await system.waitFor(async () => (await user.get(`/v1/turns/${turnId}`)).body.status === 'awaiting_approval', 'awaiting approval');
    expect((await user.patch('/v1/preferences', { autonomous_mode: true })).status).toBe(200);

    expect((await user.get('/v1/approvals?status=pending')).body).toEqual([expect.objectContaining({ id: approval?.id })]);
    expect((await user.get(`/v1/turns/${turnId}`)).body.status).toBe('awaiting_approval');
    expect((await user.post(`/v1/approvals/${approval?.id}`, { decision: 'approve' })).status).toBe(200);
    expect((await user.events(turnId)).at(-1)?.data.status).toBe('completed');
  });
});
