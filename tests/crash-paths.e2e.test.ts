import { Queue } from 'bullmq';
import type pg from 'pg';
import { Api, type StreamEvent } from '../scripts/lib/api';
import { injectFault, testDb } from './helpers/db';
import { afterTools, FakeModel, userText, type ChatRequestBody } from '../scripts/lib/fake-model';
import { HeldReplies, trailingUserTexts } from './helpers/held-model';
import { freePort, TestSystem, type Service } from '../scripts/lib/system';

/**
 * Crash safety off the main turn path (docs/architecture.md), with two copies of every process
 * and kill -9 at the worst moments: a decision taken while no agent worker runs, an interrupt or
 * a cancel while the process running the turn dies, a digest cut off mid-call.
 */
const model = new FakeModel();
const system = new TestSystem();
const held = new HeldReplies();
let db: pg.Pool;
let removeFaults: () => Promise<void>;
let api: Api;
let otherGateway: Api;
/** The next digest call is held until the test releases it. */
let holdNextDigest = false;

const isDigest = (body: ChatRequestBody) => String(body.messages[0]?.content).startsWith('You write session digests');

beforeAll(async () => {
  await model.start();
  model.script = (body) => {
    if (isDigest(body)) {
      if (!holdNextDigest) return { content: 'A digest.' };
      holdNextDigest = false;
      return held.hold('digest');
    }
    const text = userText(body);
    if (text.startsWith('hold ') && !afterTools(body)) return held.hold(text);
    const folders = /^make (.+)$/.exec(text)?.[1];
    if (folders && !afterTools(body))
      return { toolCalls: folders.split(' and ').map((name) => ({ name: 'create_folder', arguments: { name } })) };
    return { content: `echo: ${trailingUserTexts(body).join(' | ')}` };
  };
  db = testDb();
  // "Sleepy…" folders take 2 s to insert: long enough to kill their tool worker mid-tool.
  removeFaults = await injectFault(db, 'test_crash_paths', 'folders', `IF NEW.name LIKE 'Sleepy%' THEN PERFORM pg_sleep(2); END IF;`);
  await system.start({ env: { OPENAI_BASE_URL: model.url } });
  const port = await freePort();
  system.spawn('gateway', { PORT: String(port) }, 'gateway-2');
  startSecond('agent-worker');
  startSecond('tool-worker');
  api = new Api(system.url);
  otherGateway = new Api(`http://127.0.0.1:${port}`);
  await system.waitFor(async () => (await fetch(`${otherGateway.baseUrl}/readyz`).catch(() => undefined))?.status === 200, 'gateway 2');
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  held.releaseAll();
  await system.stop();
  await model.stop();
  await removeFaults();
  await db.end();
});

function startSecond(service: Service): void {
  system.spawn(service, {}, `${service}-2`);
}

/** kill -9 both copies of a process. */
async function killBoth(service: Service): Promise<void> {
  await Promise.all([system.signal(service, 'SIGKILL'), system.signal(`${service}-2`, 'SIGKILL')]);
}

function startBoth(service: Service): void {
  system.spawn(service);
  startSecond(service);
}

const types = (events: StreamEvent[]) => events.map((event) => event.event);
const folderCount = async (userId: string, name: string) =>
  (await db.query('SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1 AND name = $2', [userId, name])).rows[0].n;

it('runs a tool approved on another gateway while no agent worker runs, once, after the gateway that took it died', async () => {
  const user = await api.createUser(system.adminToken);
  const { turn_id: turnId } = await user.send('make Approved later');
  const request = (await user.events(turnId, { until: (event) => event.event === 'tool_approval_request' })).at(-1);
  await system.waitFor(async () => (await user.get(`/v1/turns/${turnId}`)).body.status === 'awaiting_approval', 'awaiting approval');
  await killBoth('agent-worker');

  const elsewhere = otherGateway.as(user.apiKey as string);
  expect((await elsewhere.post(`/v1/approvals/${request?.data.approval_id}`, { decision: 'approve' })).status).toBe(200);
  await system.signal('gateway', 'SIGKILL');
  system.spawn('gateway');
  startBoth('agent-worker');
  await system.waitReady();

  const events = await elsewhere.events(turnId);
  expect(types(events)).toContain('tool_approved');
  expect(events.at(-1)?.data.status).toBe('completed');
  expect(await folderCount(user.userId, 'Approved later')).toBe(1);
});

it('interrupts a turn whose agent workers all died mid model call: the new turn answers, the old call is never made again', async () => {
  const user = await api.createUser(system.adminToken);
  const old = await user.send('hold the first thought');
  await system.waitFor(() => held.isHeld('hold the first thought'), 'the first model call');
  await killBoth('agent-worker');

  const interrupting = await user.post('/v1/messages', { text: 'change of plan', if_busy: 'interrupt' });
  expect(interrupting.status).toBe(202);
  startBoth('agent-worker');
  expect((await user.events(old.turn_id)).at(-1)?.data.status).toBe('cancelled');
  const events = await user.events(interrupting.body.turn_id);
  expect(events.find((event) => event.event === 'message')?.data.content).toBe('echo: hold the first thought | change of plan');
  expect(events.at(-1)?.data.status).toBe('completed');
  held.release('hold the first thought');
  expect(model.requests.filter((request) => userText(request.body) === 'hold the first thought')).toHaveLength(1);
});

it('cancels a turn whose tool workers died in its second tool: each tool runs once, and the session goes on', async () => {
  const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const { turn_id: turnId } = await user.send('make Sleepy one and Sleepy two');
  await user.events(turnId, { until: (event) => event.event === 'tool_start' && event.data.task_id === 'task_2' });
  await killBoth('tool-worker');

  expect((await user.post(`/v1/turns/${turnId}/cancel`)).status).toBe(202);
  startBoth('tool-worker');
  const events = await user.events(turnId);
  expect(events.filter((event) => event.event === 'tool_complete')).toHaveLength(2);
  expect(events.at(-1)?.data.status).toBe('cancelled');
  expect(await folderCount(user.userId, 'Sleepy one')).toBe(1);
  expect(await folderCount(user.userId, 'Sleepy two')).toBe(1);
  expect((await user.converse('still there?')).events.at(-1)?.data.status).toBe('completed');
});

it('appends a reset digest to MEMORY once when its agent worker dies mid-call', async () => {
  const user = await api.createUser(system.adminToken);
  await user.converse('the piano is tuned on Tuesdays');
  holdNextDigest = true;
  expect((await user.post('/v1/sessions/agent:main:main/reset')).status).toBe(202);
  await system.waitFor(() => held.isHeld('digest'), 'the digest call');
  await killBoth('agent-worker');
  startBoth('agent-worker');

  const session = await db.query<{ id: string }>(`SELECT id FROM sessions WHERE user_id = $1 AND archived_at IS NOT NULL`, [user.userId]);
  const digests = new Queue('session-digests', { connection: { url: process.env.REDIS_URL }, prefix: system.prefix });
  try {
    await system.waitFor(
      async () => (await digests.getJobState(`digest-reset.${session.rows[0]?.id}`)) === 'completed',
      'the digest done on the new worker',
    );
  } finally {
    await digests.close();
  }
  held.release('digest', { content: 'A digest.' });
  const memory = String((await user.get('/v1/profile')).body.memory);
  expect(memory.match(/### Session digest/g)).toHaveLength(1);
});
