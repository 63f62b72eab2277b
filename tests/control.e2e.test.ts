import type pg from 'pg';
import { Api, type StreamEvent } from '../scripts/lib/api';
import { injectFault, testDb } from './helpers/db';
import { afterTools, byUserText, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * The user stays in control (docs/agent.md): approvals, limits, autonomous failures, crash
 * safety and per-session order, through the real processes.
 */
const model = new FakeModel();
const system = new TestSystem();
let db: pg.Pool;
let removeFaults: () => Promise<void>;
let api: Api;

const CUT_ANSWER = Array.from({ length: 30 }, (_, i) => `word${i}`).join(' ');

beforeAll(async () => {
  await model.start();
  db = testDb();
  // "Broken…" folders always fail; "Sleepy…" folders take 2 s to insert.
  removeFaults = await injectFault(
    db,
    'test_control_faults',
    'folders',
    `IF NEW.name LIKE 'Broken%' THEN RAISE EXCEPTION 'injected failure'; END IF;
     IF NEW.name LIKE 'Sleepy%' THEN PERFORM pg_sleep(2); END IF;`,
  );
  model.script = byUserText({
    'manual:': (body) =>
      afterTools(body)
        ? { content: 'Here is what I did.' }
        : {
            toolCalls: [
              { name: 'create_folder', arguments: { name: userText(body).slice('manual: '.length) } },
              { name: 'get_folder_contents', arguments: { folder_id: 'Inbox' } },
            ],
          },
    'manual invalid:': (body) =>
      afterTools(body) ? { content: 'Let me fix that.' } : { toolCalls: [{ name: 'create_folder', arguments: { name: '   ' } }] },
    'loop:': () => ({ content: 'Still working.', toolCalls: [{ name: 'get_folder_contents', arguments: { folder_id: 'Inbox' } }] }),
    'same:': () => ({ toolCalls: [{ name: 'get_folder_contents', arguments: { folder_id: 'Inbox' } }] }),
    'refused between:': (body) => {
      // Step 2 sends arguments that are not an object: that call is refused (stored as `{}`, as
      // list_habits' own arguments are), not a repeat.
      const step = model.requests.filter((request) => userText(request.body) === userText(body)).length;
      if (step > 3) return { content: 'Looked twice.' };
      return { toolCalls: [{ name: 'list_habits', arguments: step === 2 ? 'null' : {} }] };
    },
    'broken:': (body) =>
      afterTools(body)
        ? { content: 'Sorry.' }
        : {
            toolCalls: [
              { name: 'create_folder', arguments: { name: 'Broken box' } },
              { name: 'create_folder', arguments: { name: 'Never made' } },
            ],
          },
    'sleepy:': (body) =>
      afterTools(body) ? { content: 'Made it.' } : { toolCalls: [{ name: 'create_folder', arguments: { name: userText(body).slice(8) } }] },
    'order:': () => ({ content: 'ok', delayMs: 150 }),
    'refused:': () => ({ status: 400, content: 'model not found' }),
    'flaky model:': (_body, index) => (index % 2 === 0 ? { status: 503, content: 'overloaded' } : { content: 'made it' }),
    'down:': () => ({ status: 500, content: 'upstream broke' }),
    'cut model:': (body) =>
      // The first call for the message breaks off after eight chunks; the next one answers whole.
      model.requests.filter((request) => userText(request.body) === userText(body)).length === 1
        ? { content: CUT_ANSWER, chunkSize: 3, breakAfterChunks: 8 }
        : { content: CUT_ANSWER, chunkSize: 3 },
  });
  await system.start({ env: { OPENAI_BASE_URL: model.url } });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await model.stop();
  await removeFaults();
  await db.end();
});

async function userWithInbox(preferences: Record<string, unknown> = {}) {
  const user = await api.createUser(system.adminToken, { preferences });
  await db.query(`INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Inbox', 'inbox')`, [user.userId]);
  return user;
}

const types = (events: StreamEvent[]) => events.map((event) => event.event);
const folderCount = async (userId: string, name: string) =>
  (await db.query('SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1 AND name = $2', [userId, name])).rows[0].n;

describe('manual mode', () => {
  it('runs the read-only tool at once, waits for approval of the other, and completes when approved', async () => {
    const user = await userWithInbox();
    const { turn_id: turnId } = await user.send('manual: Projects');
    const waiting = await user.events(turnId, { until: (event) => event.event === 'task_update' && event.data.status === 'completed' });
    expect(types(waiting)).toEqual([
      'turn_started',
      'task_list',
      'tool_approval_request',
      'task_update',
      'tool_start',
      'tool_complete',
      'task_update',
    ]);
    const request = waiting[2] as StreamEvent;
    expect(request.data).toMatchObject({ task_id: 'task_1', tool_name: 'create_folder', arguments: { name: 'Projects' } });
    expect(waiting[4]?.data).toMatchObject({ task_id: 'task_2', tool_name: 'get_folder_contents' });
    await waitFor(async () => (await user.get(`/v1/turns/${turnId}`)).body.status === 'awaiting_approval', 'awaiting approval');
    expect(await folderCount(user.userId, 'Projects')).toBe(0);

    const pending = await user.get('/v1/approvals?status=pending');
    expect(pending.body).toHaveLength(1);
    expect(pending.body[0]).toMatchObject({
      id: request.data.approval_id,
      task_id: 'task_1',
      tool_name: 'create_folder',
      status: 'pending',
    });

    expect((await user.post(`/v1/approvals/${request.data.approval_id}`, { decision: 'approve' })).status).toBe(200);
    const rest = await user.events(turnId, { lastEventId: waiting.at(-1)?.id });
    expect(types(rest).slice(0, 5)).toEqual(['tool_approved', 'task_update', 'tool_start', 'tool_complete', 'task_update']);
    expect(rest.at(-1)?.data.status).toBe('completed');
    expect(await folderCount(user.userId, 'Projects')).toBe(1);
    expect((await user.post(`/v1/approvals/${request.data.approval_id}`, { decision: 'reject' })).status).toBe(409);
  });

  it('skips a rejected task, tells the model, changes nothing and completes', async () => {
    const user = await userWithInbox();
    const { turn_id: turnId } = await user.send('manual: Rejected');
    const waiting = await user.events(turnId, { until: (event) => event.event === 'tool_approval_request' });
    const approvalId = waiting.at(-1)?.data.approval_id;
    await waitFor(async () => (await user.get(`/v1/turns/${turnId}`)).body.status === 'awaiting_approval', 'awaiting approval');
    expect((await user.post(`/v1/approvals/${approvalId}`, { decision: 'reject' })).status).toBe(200);
    const events = await user.events(turnId);
    expect(types(events)).toEqual(expect.arrayContaining(['tool_rejected']));
    expect(events.find((event) => event.event === 'task_update' && event.data.task_id === 'task_1')?.data.status).toBe('skipped');
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(await folderCount(user.userId, 'Rejected')).toBe(0);
    const followUp = model.requests.filter((r) => userText(r.body) === 'manual: Rejected' && afterTools(r.body)).at(-1);
    expect(followUp?.raw).toContain('rejected');
  });

  it('answers a call whose arguments the tool refuses at once, without asking for an approval', async () => {
    const user = await userWithInbox();
    const { events } = await user.converse('manual invalid: a blank name');
    expect(types(events)).not.toContain('tool_approval_request');
    const result = JSON.parse(String(events.find((event) => event.event === 'tool_complete')?.data.result));
    expect(result).toMatchObject({ success: false, error: expect.stringContaining('name: must not be blank') });
    expect(events.at(-1)?.data.status).toBe('completed');
    expect((await user.get('/v1/approvals?status=pending')).body).toEqual([]);
  });

  it('keeps a turn waiting for approval across a restart of every process', async () => {
    const user = await userWithInbox();
    const { turn_id: turnId } = await user.send('manual: Survivor');
    await user.events(turnId, { until: (event) => event.event === 'tool_approval_request' });
    await waitFor(async () => (await user.get(`/v1/turns/${turnId}`)).body.status === 'awaiting_approval', 'awaiting approval');

    await system.restart();

    const [approval] = (await user.get('/v1/approvals?status=pending')).body;
    expect((await user.post(`/v1/approvals/${approval.id}`, { decision: 'approve' })).status).toBe(200);
    const events = await user.events(turnId);
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(await folderCount(user.userId, 'Survivor')).toBe(1);
  });
});

describe('limits', () => {
  it('ends limit_reached after max_iterations model calls, the last one without tools', async () => {
    const user = await userWithInbox({ autonomous_mode: true, max_iterations: 2 });
    const before = model.requests.length;
    const { events } = await user.converse('loop: keep going');
    const calls = model.requests.slice(before).filter((r) => userText(r.body) === 'loop: keep going');
    expect(calls).toHaveLength(2);
    expect(calls[0]?.body.tools?.length).toBeGreaterThan(0);
    expect(calls[1]?.body.tools ?? []).toHaveLength(0);
    expect(types(events).slice(-3)).toEqual(['message', 'iteration_limit', 'done']);
    expect(events.find((event) => event.event === 'iteration_limit')?.data.max_iterations).toBe(2);
    expect(events.at(-1)?.data.status).toBe('limit_reached');
  });

  it('refuses max_iterations outside 1..50 and changes nothing', async () => {
    const user = await api.createUser(system.adminToken);
    for (const value of [0, 51, 2.5, '10']) {
      const res = await user.patch('/v1/preferences', { max_iterations: value });
      expect(res.status).toBe(400);
      expect(res.body.error.details).toBeDefined();
    }
    expect((await user.patch('/v1/preferences', { autonomous_mode: true, max_iterations: 99 })).status).toBe(400);
    expect((await user.get('/v1/preferences')).body).toMatchObject({ max_iterations: 15, autonomous_mode: false });
  });

  it('stops three identical consecutive tool calls with an explanation', async () => {
    const user = await userWithInbox({ autonomous_mode: true });
    const { events } = await user.converse('same: again and again');
    expect(events.filter((event) => event.event === 'tool_start')).toHaveLength(2);
    expect(String(events.find((event) => event.event === 'message')?.data.content)).toMatch(/get_folder_contents/);
    expect(events.at(-1)?.data.status).toBe('limit_reached');
  });

  it('does not count a refused call between two identical ones as a repeat', async () => {
    const user = await userWithInbox({ autonomous_mode: true });
    const { events } = await user.converse('refused between: look twice');
    expect(events.filter((event) => event.event === 'tool_start')).toHaveLength(2);
    expect(events.find((event) => event.event === 'message')?.data.content).toBe('Looked twice.');
    expect(events.at(-1)?.data.status).toBe('completed');
  });
});

describe('autonomous mode', () => {
  it('asks whether to continue after a tool fails twice, and stops when told to', async () => {
    const user = await userWithInbox({ autonomous_mode: true });
    const { turn_id: turnId } = await user.send('broken: please');
    const asked = await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    expect(types(asked)).toEqual(expect.arrayContaining(['tool_retry', 'tool_failed', 'ask_user_continue']));
    expect(asked.at(-1)?.data.remaining_tasks).toEqual(['task_2']);
    // Worded for a chat, which shows it as it is: what failed as the plan named it, no task ids.
    const failed = asked.find((event) => event.event === 'task_update' && event.data.status === 'failed')?.data.task_id;
    const plan = asked.find((event) => event.event === 'task_list')?.data.tasks as { id: string; description: string }[];
    const description = plan.find((task) => task.id === failed)?.description;
    expect(asked.at(-1)?.data.question).toBe(`${description}: failed even after a retry. Continue with the remaining task?`);
    expect((await user.get(`/v1/turns/${turnId}`)).body.status).toBe('awaiting_user');

    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: false })).status).toBe(202);
    const rest = await user.events(turnId, { lastEventId: asked.at(-1)?.id });
    expect(rest.find((event) => event.event === 'task_update')?.data).toMatchObject({ task_id: 'task_2', status: 'skipped' });
    expect(rest.at(-1)?.data.status).toBe('completed');
    expect(await folderCount(user.userId, 'Never made')).toBe(0);
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: true })).status).toBe(409);
  });

  it('goes on with the remaining tasks when told to continue', async () => {
    const user = await userWithInbox({ autonomous_mode: true });
    const { turn_id: turnId } = await user.send('broken: again');
    const asked = await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: true })).status).toBe(202);
    const rest = await user.events(turnId, { lastEventId: asked.at(-1)?.id });
    expect(rest.at(-1)?.data.status).toBe('completed');
    expect(await folderCount(user.userId, 'Never made')).toBe(1);
  });

  it('cancels a turn that waits, skipping what is left', async () => {
    const user = await userWithInbox();
    const { turn_id: turnId } = await user.send('manual: Cancelled');
    await user.events(turnId, { until: (event) => event.event === 'tool_approval_request' });
    expect((await user.post(`/v1/turns/${turnId}/cancel`)).status).toBe(202);
    const events = await user.events(turnId);
    expect(events.at(-1)?.data.status).toBe('cancelled');
    expect((await user.get(`/v1/turns/${turnId}`)).body.status).toBe('cancelled');
    expect((await user.post(`/v1/turns/${turnId}/cancel`)).status).toBe(409);
    expect(await folderCount(user.userId, 'Cancelled')).toBe(0);
  });

  it('takes a turn id in upper case for the same turn: its stream, and a cancel that ends it', async () => {
    const user = await userWithInbox();
    const { turn_id: turnId } = await user.send('manual: Shouted');
    const upper = turnId.toUpperCase();
    await user.events(upper, { until: (event) => event.event === 'tool_approval_request' });
    expect((await user.post(`/v1/turns/${upper}/cancel`)).body).toEqual({ id: turnId, status: 'cancelled' });
    const events = await user.events(turnId);
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'cancelled' });
  });
});

describe('model failures', () => {
  it('fails the turn at once with a clear error when the model refuses the request', async () => {
    const user = await api.createUser(system.adminToken);
    const { events } = await user.converse('refused: hello');
    expect(types(events).slice(-2)).toEqual(['error', 'done']);
    expect(events.at(-2)?.data).toMatchObject({ code: 'model_error' });
    expect(events.at(-1)?.data.status).toBe('failed');
  });

  it('streams the answer once when the model breaks off in mid-answer and is called again', async () => {
    const user = await api.createUser(system.adminToken);
    const { events } = await user.converse('cut model: tell me a story');
    expect(model.requests.filter((request) => userText(request.body) === 'cut model: tell me a story')).toHaveLength(2);
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(events.find((event) => event.event === 'message')?.data.content).toBe(CUT_ANSWER);
    const deltas = events.filter((event) => event.event === 'token').map((event) => String(event.data.delta));
    expect(deltas.join('')).toBe(CUT_ANSWER);
  });

  it('retries a model that fails for a moment, and one that keeps failing ends the turn failed with model_error', async () => {
    const user = await api.createUser(system.adminToken);
    const before = model.requests.length;
    const flaky = await user.converse('flaky model: hello');
    expect(flaky.events.at(-1)?.data.status).toBe('completed');
    expect(model.requests.length - before).toBeGreaterThanOrEqual(1);

    const down = await user.converse('down: hello');
    expect(down.events.at(-2)?.data).toMatchObject({ code: 'model_error', message: expect.stringMatching(/model endpoint kept failing/) });
    expect(down.events.at(-1)?.data.status).toBe('failed');
    expect((await user.converse('order: still usable')).events.at(-1)?.data.status).toBe('completed');
  });
});

describe('approval expiry', () => {
  it('skips a task nobody approved within APPROVAL_TTL_SECONDS and finishes the turn', async () => {
    const short = await new TestSystem().start({ env: { OPENAI_BASE_URL: model.url, APPROVAL_TTL_SECONDS: '1' } });
    try {
      const user = await new Api(short.url).createUser(short.adminToken);
      await db.query(`INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Inbox', 'inbox')`, [user.userId]);
      const { turn_id: turnId } = await user.send('manual: Too late');
      const events = await user.events(turnId);
      expect(events.find((event) => event.event === 'task_update' && event.data.task_id === 'task_1')?.data.status).toBe('skipped');
      expect(events.at(-1)?.data.status).toBe('completed');
      const approvalId = events.find((event) => event.event === 'tool_approval_request')?.data.approval_id;
      expect((await user.post(`/v1/approvals/${approvalId}`, { decision: 'approve' })).status).toBe(409);
      expect((await user.get('/v1/approvals')).body[0].status).toBe('expired');
      expect(await folderCount(user.userId, 'Too late')).toBe(0);
    } finally {
      await short.stop();
    }
  });
});

describe('crash safety', () => {
  it('finishes a turn on a new agent worker after kill -9 of the old one, the row created once', async () => {
    const user = await userWithInbox({ autonomous_mode: true });
    const { turn_id: turnId } = await user.send('sleepy: Sleepy agent');
    await user.events(turnId, { until: (event) => event.event === 'tool_start' });
    await system.signal('agent-worker', 'SIGKILL');
    system.spawn('agent-worker');
    const events = await user.events(turnId, { timeoutMs: 30_000 });
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(await folderCount(user.userId, 'Sleepy agent')).toBe(1);
  });

  it('re-runs a tool on a new tool worker after kill -9 mid-tool, the row created once', async () => {
    const user = await userWithInbox({ autonomous_mode: true });
    const { turn_id: turnId } = await user.send('sleepy: Sleepy tool');
    const started = await user.events(turnId, { until: (event) => event.event === 'tool_start' });
    await system.signal('tool-worker', 'SIGKILL');
    system.spawn('tool-worker');
    const events = await user.events(turnId, { lastEventId: started.at(-1)?.id, timeoutMs: 30_000 });
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(events.filter((event) => event.event === 'tool_complete')).toHaveLength(1);
    expect(await folderCount(user.userId, 'Sleepy tool')).toBe(1);
  });
});

describe('per-session order', () => {
  it('runs five messages to one session one after another, in sending order', async () => {
    const user = await api.createUser(system.adminToken);
    const texts = [1, 2, 3, 4, 5].map((n) => `order: same session ${n}`);
    const turns = [];
    for (const text of texts) turns.push(await user.send(text));
    expect((await user.get(`/v1/turns/${turns[4]?.turn_id}`)).body.status).toBe('queued');
    for (const turn of turns) expect((await user.events(turn.turn_id)).at(-1)?.data.status).toBe('completed');

    const seen = model.requests.filter((r) => texts.includes(userText(r.body)));
    expect(seen.map((r) => userText(r.body))).toEqual(texts);
    for (let i = 1; i < seen.length; i++) {
      expect(seen[i]?.startedAt).toBeGreaterThanOrEqual(seen[i - 1]?.endedAt ?? Infinity);
    }
  });

  it('runs messages to five sessions in parallel', async () => {
    const user = await api.createUser(system.adminToken);
    const sends = [1, 2, 3, 4, 5].map((n) => user.send(`order: parallel ${n}`, `agent:main:api:direct:peer${n}`));
    const turns = await Promise.all(sends);
    await Promise.all(turns.map((turn) => user.events(turn.turn_id)));
    const seen = model.requests.filter((r) => userText(r.body).startsWith('order: parallel'));
    expect(seen).toHaveLength(5);
    const overlapping = seen.some((a) => seen.some((b) => a !== b && a.startedAt < (b.endedAt ?? 0) && b.startedAt < (a.endedAt ?? 0)));
    expect(overlapping).toBe(true);
  });
});
