import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { eraseUserJobId, reminderFireJobId } from '@assistant/shared';
import { Api, type StreamEvent } from '../scripts/lib/api';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { injectFault, testDb } from './helpers/db';
import { afterTools, byUserText, FakeModel, userText, type Script } from '../scripts/lib/fake-model';
import { FakeTelegram } from './helpers/fake-telegram';
import { freePort, TestSystem } from '../scripts/lib/system';

/**
 * Operators stay in charge (issue 16; docs/api.md#operators, docs/agent.md#limits): usage accounting, daily token budgets,
 * API keys, export, erasure and the admin's users API, through the real processes, the fake
 * model (which reports usage like OpenAI) and a fake Telegram.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const system = new TestSystem();
const TG_SECRET = 'operators-tg-secret';
let db: pg.Pool;
let redis: Redis;
let api: Api;
let admin: Api;
let removeFault: () => Promise<void>;

const ONE = { prompt_tokens: 100, completion_tokens: 20, cached_tokens: 60 };
const PLAN = { prompt_tokens: 50, completion_tokens: 10 };
const AFTER = { prompt_tokens: 70, completion_tokens: 5, cached_tokens: 30 };
const RETRIED = { prompt_tokens: 40, completion_tokens: 4, cached_tokens: 10 };

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start()]);
  db = testDb();
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  // The first time the answer "counted once" is stored, its transaction fails: the step is retried.
  await db.query('CREATE SEQUENCE IF NOT EXISTS test_operators_retry_once');
  removeFault = await injectFault(
    db,
    'test_operators_retry_fault',
    'messages',
    `IF NEW.content = 'counted once' AND nextval('test_operators_retry_once') = 1 THEN RAISE EXCEPTION 'injected commit failure'; END IF;`,
  );
  const scripted = {
    'usage:': () => ({ content: 'ok', usage: ONE }),
    'no usage:': () => ({ content: 'ok', usage: null }),
    'tools usage:': (body) =>
      afterTools(body) ? { content: 'listed', usage: AFTER } : { toolCalls: [{ name: 'list_habits', arguments: {} }], usage: PLAN },
    'retry once:': () => ({ content: 'counted once', usage: RETRIED }),
    'slow:': () => ({ content: 'slowly', delayMs: 1_500 }),
    'slow usage:': () => ({ content: 'too late', delayMs: 1_500, usage: ONE }),
    'remind:': (body) => {
      if (afterTools(body)) return { content: 'Reminder set.' };
      const [, text, at] = /^remind: (.+) at (.+)$/.exec(userText(body)) ?? [];
      return { toolCalls: [{ name: 'create_reminder', arguments: { text, at } }] };
    },
  } satisfies Record<string, Script>;
  const routes = byUserText(scripted);
  // Anything else is echoed, so a chat's answer names the message it answers.
  model.script = (body, index) =>
    Object.keys(scripted).some((prefix) => userText(body).startsWith(prefix))
      ? routes(body, index)
      : { content: `echo: ${userText(body)}` };
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      // No safety net: what a turn owes must go out on the way (a turn stopped at its budget included).
      OUTBOX_SWEEP_MS: '600000',
      TELEGRAM_BOT_TOKEN: '123456:operators-token',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
    },
  });
  api = new Api(system.url);
  admin = api.as(system.adminToken);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), telegram.stop()]);
  await removeFault();
  await redis.quit();
  await db.end();
});

const final = (events: StreamEvent[]) => events.at(-1)?.data.status;
const today = () => new Date().toISOString().slice(0, 10);

const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, 'unused-whatsapp-secret');
/** Chat ids far from the ones ChannelWebhooks hands out, which other test files use in the same database. */
const chatIds = {
  budget: 7_100_001,
  erasure: 7_200_001,
  admin: 7_300_001,
  throttled: 7_400_001,
  cutShort: 7_500_001,
  throttledReply: 7_600_001,
};

async function telegramText(chat: number, text: string): Promise<void> {
  expect((await webhooks.postTelegram(webhooks.tgText(chat, text, 8_000_000 + webhooks.nextId()))).status).toBe(200);
}

/** Links a new Telegram chat to the user with /link and waits for the confirmation. */
async function linkTelegram(user: Api, chat: number): Promise<void> {
  const { body } = await user.post('/v1/link-codes');
  await telegramText(chat, `/link ${body.code}`);
  await system.waitFor(() => telegram.received(chat).some((call) => String(call.body.text).startsWith('Linked')), 'the link confirmation');
}

describe('usage', () => {
  it("equals the model's reported usage over several turns, counting a retried step once", async () => {
    const user = await api.createUser(system.adminToken);
    expect(final((await user.converse('usage: one')).events)).toBe('completed');
    expect(final((await user.converse('tools usage: two')).events)).toBe('completed');
    const retried = await user.converse('retry once: three');
    expect(final(retried.events)).toBe('completed');
    // The model answered that step twice; only the stored outcome counts.
    expect(model.requests.filter((r) => userText(r.body) === 'retry once: three')).toHaveLength(2);
    expect(model.requests.every((r) => r.body.stream_options?.include_usage === true)).toBe(true);

    const res = await user.get('/v1/usage?days=3');
    expect(res.status).toBe(200);
    expect(res.body.days.map((day: { date: string }) => day.date)[0]).toBe(today());
    expect(res.body.days).toHaveLength(3);
    expect(res.body.days[0]).toEqual({
      date: today(),
      turns: 3,
      model_calls: 4,
      prompt_tokens: ONE.prompt_tokens + PLAN.prompt_tokens + AFTER.prompt_tokens + RETRIED.prompt_tokens,
      cached_prompt_tokens: ONE.cached_tokens + AFTER.cached_tokens + RETRIED.cached_tokens,
      completion_tokens: ONE.completion_tokens + PLAN.completion_tokens + AFTER.completion_tokens + RETRIED.completion_tokens,
    });
    expect(res.body.days[1]).toMatchObject({ turns: 0, model_calls: 0, prompt_tokens: 0 });
    expect(res.body.budget).toEqual({ daily_tokens: 0, used_today: 260 + 39 });
    expect((await user.get('/v1/usage')).body.days).toHaveLength(7);
    expect((await user.get('/v1/usage?days=91')).status).toBe(400);

    // /metrics has the figures only in aggregate: no user id in any label.
    const metrics = await (await fetch(`${system.url}/metrics`)).text();
    expect(metrics).toMatch(/assistant_model_tokens_total\{kind="cached_prompt"\} \d+/);
    expect(metrics).not.toContain(user.userId);
  });

  it('counts a call whose turn was cancelled while the model answered, as one of its iterations', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id } = await user.send('slow usage: cancelled');
    const call = await system.waitFor(() => model.requests.find((r) => userText(r.body) === 'slow usage: cancelled'), 'the model call');
    expect((await user.post(`/v1/turns/${turn_id}/cancel`)).status).toBe(202);
    expect(final(await user.events(turn_id))).toBe('cancelled');
    await system.waitFor(() => call.endedAt, 'the answer');

    const spent = ONE.prompt_tokens + ONE.completion_tokens;
    await system.waitFor(async () => (await user.get('/v1/usage?days=1')).body.budget.used_today === spent, 'the call counted');
    expect((await user.get('/v1/usage?days=1')).body.days[0]).toMatchObject({ turns: 1, model_calls: 1 });
    expect((await user.get(`/v1/turns/${turn_id}`)).body).toMatchObject({ status: 'cancelled', iterations: 1 });
  });
});

describe('budgets', () => {
  it('fail a turn past the budget without calling the model, and let the next one through once raised', async () => {
    const user = await api.createUser(system.adminToken);
    const patched = await admin.patch(`/v1/admin/users/${user.userId}`, { daily_token_budget: 150 });
    expect(patched.status).toBe(200);
    expect(patched.body).toMatchObject({ id: user.userId, disabled: false, daily_token_budget: 150 });

    expect(final((await user.converse('usage: a')).events)).toBe('completed');
    // Under the budget before the call: this one may overshoot it, by one call.
    expect(final((await user.converse('usage: b')).events)).toBe('completed');
    const before = model.requests.length;
    const stopped = await user.converse('usage: c');
    expect(model.requests.length).toBe(before);
    expect(final(stopped.events)).toBe('failed');
    const error = stopped.events.find((event) => event.event === 'error');
    expect(error?.data).toMatchObject({ code: 'budget_exhausted' });
    expect(String(error?.data.message)).toMatch(/resets at \d{4}-\d\d-\d\d 00:00 UTC/);
    expect((await user.get(`/v1/turns/${stopped.turnId}`)).body.status).toBe('failed');
    expect((await user.get('/v1/usage')).body.budget).toEqual({ daily_tokens: 150, used_today: 240 });

    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { daily_token_budget: 1_000 })).status).toBe(200);
    expect(final((await user.converse('usage: d')).events)).toBe('completed');
    const reset = await admin.patch(`/v1/admin/users/${user.userId}`, { daily_token_budget: null });
    expect(reset.body.daily_token_budget).toBeNull();
  });

  it('hold for a model endpoint that reports no usage: its calls are counted by their length', async () => {
    const user = await api.createUser(system.adminToken);
    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { daily_token_budget: 100 })).status).toBe(200);
    expect(final((await user.converse('no usage: a')).events)).toBe('completed');
    // The request alone is thousands of characters: far over 100 tokens.
    expect((await user.get('/v1/usage')).body.budget.used_today).toBeGreaterThan(100);
    const before = model.requests.length;
    const stopped = await user.converse('no usage: b');
    expect(model.requests.length).toBe(before);
    expect(stopped.events.find((event) => event.event === 'error')?.data).toMatchObject({ code: 'budget_exhausted' });
  });

  it('answer a chat with when the budget resets', async () => {
    const user = await api.createUser(system.adminToken);
    const chat = chatIds.budget;
    await linkTelegram(user, chat);
    await admin.patch(`/v1/admin/users/${user.userId}`, { daily_token_budget: 1 });
    await telegramText(chat, 'usage: over it');
    await system.waitFor(() => telegram.received(chat).some((call) => call.body.text === 'ok'), 'the answer within budget');
    await telegramText(chat, 'usage: again');
    const reply = await system.waitFor(
      () => telegram.received(chat).find((call) => String(call.body.text).includes('resets at')),
      'the budget reply',
    );
    expect(reply.body.text).toContain('UTC');
  });
});

describe('API keys', () => {
  it('creates, lists without secrets, revokes at once on every gateway, and keeps the last key', async () => {
    const user = await api.createUser(system.adminToken);
    const created = await user.post('/v1/api-keys', { name: 'laptop' });
    expect(created.status).toBe(201);
    expect(Object.keys(created.body).sort()).toEqual(['api_key', 'id']);
    const laptop = user.as(created.body.api_key);
    expect((await laptop.get('/v1/me')).body.id).toBe(user.userId);

    const listed = await system.waitFor(async () => {
      const res = await user.get('/v1/api-keys');
      return res.body.find((key: { id: string; last_used_at: string | null }) => key.id === created.body.id && key.last_used_at)
        ? res
        : undefined;
    }, 'last_used_at of the new key');
    expect(listed.body).toHaveLength(2);
    expect(listed.body[1]).toEqual({
      id: created.body.id,
      name: 'laptop',
      prefix: created.body.api_key.slice(0, 9),
      created_at: expect.any(String),
      last_used_at: expect.any(String),
    });
    expect(JSON.stringify(listed.body)).not.toContain(created.body.api_key);
    expect((await user.post('/v1/api-keys', { name: '' })).status).toBe(400);

    // A second gateway: revocation through one is seen by the other at once.
    const port = await freePort();
    system.spawn('gateway', { PORT: String(port) }, 'gateway-2');
    const other = new Api(`http://127.0.0.1:${port}`, created.body.api_key);
    await system.waitFor(async () => (await fetch(`${other.baseUrl}/readyz`).catch(() => undefined))?.status === 200, 'the second gateway');
    expect((await other.get('/v1/me')).status).toBe(200);
    expect((await user.request('DELETE', `/v1/api-keys/${created.body.id}`)).status).toBe(204);
    expect((await other.get('/v1/me')).status).toBe(401);
    expect((await laptop.get('/v1/me')).status).toBe(401);
    await system.signal('gateway-2', 'SIGTERM');

    const [only] = (await user.get('/v1/api-keys')).body;
    const last = await user.request('DELETE', `/v1/api-keys/${only.id}`);
    expect(last.status).toBe(409);
    expect(last.body.error.code).toBe('last_api_key');
    const stranger = await api.createUser(system.adminToken);
    expect((await stranger.request('DELETE', `/v1/api-keys/${only.id}`)).status).toBe(404);
    expect((await user.get('/v1/me')).status).toBe(200);
  });

  it('holds a user to 50 keys, even when the requests for them come together', async () => {
    const user = await api.createUser(system.adminToken);
    const answers = await Promise.all(Array.from({ length: 55 }, () => user.post('/v1/api-keys', {})));
    expect(answers.filter((answer) => answer.status === 201)).toHaveLength(49);
    expect(answers.filter((answer) => answer.status !== 201).map((answer) => answer.body.error.code)).toEqual(
      Array(6).fill('too_many_keys'),
    );
    expect((await user.get('/v1/api-keys')).body).toHaveLength(50);
  });

  it('answers requests sent together (their keys read together) each as its own user, a revoked or unknown key refused', async () => {
    const [ann, bob] = await Promise.all([api.createUser(system.adminToken), api.createUser(system.adminToken)]);
    const spare = await ann.post('/v1/api-keys', { name: 'spare' });
    expect((await ann.request('DELETE', `/v1/api-keys/${spare.body.id}`)).status).toBe(204);
    const callers = [ann, bob, ann.as(spare.body.api_key), ann.as('ak_not-a-key'), bob];
    const answers = await Promise.all(callers.map((caller) => caller.get('/v1/me')));
    expect(answers.map((answer) => [answer.status, answer.body.id])).toEqual([
      [200, ann.userId],
      [200, bob.userId],
      [401, undefined],
      [401, undefined],
      [200, bob.userId],
    ]);
    // RFC 6750: a 401 says how to authenticate.
    expect(answers[2]?.headers.get('www-authenticate')).toBe('Bearer');
    expect((await new Api(system.url).get('/v1/me')).headers.get('www-authenticate')).toBe('Bearer');
  });
});

/** A turn's events are gone; at most a bare `done` is left for a while, so nothing is written there again. */
async function expectNoEventsOf(turnId: string): Promise<void> {
  expect(await redis.exists(`${system.prefix}:turn:${turnId}:events`)).toBe(0);
  expect(Object.keys(await redis.hgetall(`${system.prefix}:turn:${turnId}:meta`)).filter((field) => field !== 'done')).toEqual([]);
}

describe('export', () => {
  it("streams every row of the user's and nothing of anyone else's", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Exporter' });
    const other = await api.createUser(system.adminToken, { name: 'Someone Else' });
    for (const [owner, name] of [
      [user, 'Exported folder'],
      [other, 'Secret of another user'],
    ] as const) {
      await db.query(`INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, $2::text, lower($2::text))`, [
        owner.userId,
        name,
      ]);
      expect((await owner.post('/v1/gotchas', { description: `gotcha of ${name}` })).status).toBe(201);
    }
    expect(final((await user.converse('hello export')).events)).toBe('completed');
    expect(final((await other.converse('hello secret')).events)).toBe('completed');
    // A long conversation crosses many pages of the export's reads.
    await db.query(
      `INSERT INTO messages (session_id, role, content)
       SELECT s.id, 'user', 'bulk ' || n FROM sessions s, generate_series(1, 2500) AS n WHERE s.user_id = $1`,
      [user.userId],
    );

    const res = await fetch(`${system.url}/v1/export`, { headers: { authorization: `Bearer ${user.apiKey}` } });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('application/json');
    const text = await res.text();
    const exported = JSON.parse(text);
    expect(Object.keys(exported)).toEqual(
      expect.arrayContaining([
        'user',
        'preferences',
        'profile',
        'folders',
        'documents',
        'habits',
        'reminders',
        'goals',
        'gotchas',
        'sessions',
      ]),
    );
    expect(exported.user).toMatchObject({ id: user.userId, display_name: 'Exporter' });
    expect(exported.profile).toEqual((await user.get('/v1/profile')).body);
    expect(exported.preferences).toMatchObject({ autonomous_mode: false, max_iterations: 15 });
    expect(exported.folders.map((folder: { name: string }) => folder.name)).toEqual(['Exported folder']);
    expect(exported.gotchas).toHaveLength(1);
    expect(exported.sessions).toHaveLength(1);
    const contents = exported.sessions[0].messages.map((message: { content: string }) => message.content);
    expect(contents.slice(0, 2)).toEqual(['hello export', 'echo: hello export']);
    expect(contents).toHaveLength(2 + 2500);
    expect(contents.at(-1)).toBe('bulk 2500');
    expect(text).not.toContain(other.userId);
    expect(text).not.toContain('Secret of another user');
    expect(text).not.toContain('hello secret');
    expect(text).not.toContain('key_hash');
  });
});

describe('erasure', () => {
  it('removes every row, event stream, job and channel identity of the user; a due reminder never fires', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Leaving', preferences: { autonomous_mode: true } });
    const twin = await api.createUser(system.adminToken, { name: 'Staying', preferences: { autonomous_mode: true } });
    const chat = chatIds.erasure;
    await linkTelegram(user, chat);
    await telegramText(chat, 'from the chat');
    await system.waitFor(() => telegram.received(chat).some((call) => call.body.text === 'echo: from the chat'), 'the chat answer');

    const at = new Date(Date.now() + 6_000).toISOString();
    expect(final((await user.converse(`remind: Leaving reminder at ${at}`)).events)).toBe('completed');
    expect(final((await twin.converse(`remind: Staying reminder at ${at}`)).events)).toBe('completed');
    const reminder = (await db.query<{ id: string }>('SELECT id FROM reminders WHERE user_id = $1', [user.userId])).rows[0]?.id as string;
    const turnIds = (await db.query<{ id: string }>('SELECT id FROM turns WHERE user_id = $1', [user.userId])).rows.map((row) => row.id);
    expect(turnIds).toHaveLength(2);
    const streamKey = (turnId: string) => `${system.prefix}:turn:${turnId}:events`;
    expect(await redis.exists(...turnIds.map(streamKey))).toBe(turnIds.length);

    // The sessions' idle digests wait, delayed; none of them may run after the erasure.
    const digests = new Queue('session-digests', { connection: redis, prefix: system.prefix });
    const digestStates = () => Promise.all(turnIds.map((turnId) => digests.getJobState(`digest-idle.${turnId}`)));
    expect(new Set(await digestStates())).toEqual(new Set(['delayed', 'unknown']));
    expect((await digestStates()).filter((state) => state === 'delayed').length).toBeGreaterThan(0);

    const sentToChat = () =>
      db
        .query(`SELECT COUNT(*)::int AS n FROM deliveries WHERE channel = 'telegram' AND recipient = $1`, [String(chat)])
        .then((r) => r.rows[0].n);
    expect(await sentToChat()).toBeGreaterThan(0);

    expect((await user.post('/v1/gotchas', { description: 'a gotcha of the leaving user' })).status).toBe(201);
    const erased = await user.request('DELETE', '/v1/me');
    expect(erased.status).toBe(202);
    // The key is refused from the first moment.
    expect((await user.get('/v1/me')).status).toBe(401);
    await system.waitFor(
      async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0,
      'the erasure job',
    );

    const tables = await db.query<{ table_name: string }>(
      `SELECT table_name FROM information_schema.columns WHERE table_schema = 'public' AND column_name = 'user_id'`,
    );
    expect(tables.rows.length).toBeGreaterThanOrEqual(10);
    for (const { table_name: table } of tables.rows) {
      const left = await db.query(`SELECT COUNT(*)::int AS n FROM ${table} WHERE user_id = $1`, [user.userId]);
      expect([table, left.rows[0].n]).toEqual([table, 0]);
    }
    expect((await db.query('SELECT COUNT(*)::int AS n FROM turns WHERE id = ANY($1)', [turnIds])).rows[0].n).toBe(0);
    for (const turnId of turnIds) await expectNoEventsOf(turnId);
    // Nor any other key named after them (rate-limit windows: messages, link codes, gotchas), the erasure's own job included once it ends.
    await system.waitFor(async () => (await digests.getJobState(eraseUserJobId(user.userId))) === 'unknown', 'the erasure job gone');
    expect(await redis.keys(`${system.prefix}:*${user.userId}*`)).toEqual([]);
    // BullMQ's event stream of the queue keeps the ids of jobs gone long ago: the erasure's own names nobody.
    expect(JSON.stringify(await redis.xrange(`${system.prefix}:session-digests:events`, '-', '+'))).not.toContain(user.userId);
    expect(new Set(await digestStates())).toEqual(new Set(['unknown']));
    expect(await sentToChat()).toBe(0);
    // Nor do the finished deliveries of their answers stay in Redis, texts and chat id in hand.
    const deliveries = new Queue('deliveries', { connection: redis, prefix: system.prefix });
    const delivered = (await deliveries.getJobs(['completed', 'failed'])).filter((job) => turnIds.includes(job?.data.turnId));
    expect(delivered).toEqual([]);
    await deliveries.close();
    await digests.close();

    const reminders = new Queue('reminders', { connection: redis, prefix: system.prefix });
    try {
      expect(await reminders.getJobState(reminderFireJobId(reminder, new Date(at)))).toBe('unknown');
      // The twin's reminder, due at the same time, fires; the erased user's never does.
      await system.waitFor(
        async () => {
          const messages = await twin.get('/v1/sessions/agent:main:main/messages');
          return messages.body.some((m: { content: string }) => m.content === 'Staying reminder');
        },
        'the twin reminder',
        { timeoutMs: 20_000 },
      );
    } finally {
      await reminders.close();
    }
    expect(telegram.received(chat).some((call) => call.body.text === 'Leaving reminder')).toBe(false);
    expect((await db.query("SELECT COUNT(*)::int AS n FROM messages WHERE content = 'Leaving reminder'")).rows[0].n).toBe(0);

    // The chat is a stranger now: its next message starts a new user.
    await telegramText(chat, 'anyone there?');
    await system.waitFor(() => telegram.received(chat).some((call) => call.body.text === 'echo: anyone there?'), 'the new user answer');
    const identity = await db.query<{ user_id: string }>(
      `SELECT user_id FROM channel_identities WHERE channel = 'telegram' AND external_id = $1`,
      [String(chat)],
    );
    expect(identity.rows[0]?.user_id).toEqual(expect.any(String));
    expect(identity.rows[0]?.user_id).not.toBe(user.userId);
    expect((await admin.request('DELETE', `/v1/admin/users/${user.userId}`)).status).toBe(404);
  });

  it('erases a user while their turn streams its answer: none of it is written to Redis afterwards', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Mid-sentence' });
    const running = await user.send('slow: erased while answering');
    const queued = await user.send('queued behind the erasure');
    await system.waitFor(() => model.requests.some((r) => userText(r.body) === 'slow: erased while answering'), 'the model call');
    expect((await admin.request('DELETE', `/v1/admin/users/${user.userId}`)).status).toBe(202);
    await system.waitFor(
      async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0,
      'the erasure job',
    );
    // The slow answer (1.5 s) ends after the erasure: its tokens must not bring the stream back.
    await new Promise((resolve) => setTimeout(resolve, 2_500));
    for (const turnId of [running.turn_id, queued.turn_id]) await expectNoEventsOf(turnId);
    expect(model.requests.some((r) => userText(r.body) === 'queued behind the erasure')).toBe(false);
    expect((await db.query('SELECT COUNT(*)::int AS n FROM turns WHERE user_id = $1', [user.userId])).rows[0].n).toBe(0);
  });

  it("takes an answer waiting out a 429 out of its chat's line, whose key names the chat", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Throttled' });
    const chat = chatIds.throttled;
    await linkTelegram(user, chat);
    telegram.throttle(chat, 60);
    await telegramText(chat, 'answer me later');
    const line = `${system.prefix}:delivery-line:telegram:${chat}`;
    await system.waitFor(async () => (await redis.zcard(line)) === 1, 'the answer waiting in its line');

    expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
    await system.waitFor(
      async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0,
      'the erasure job',
    );
    expect(await redis.exists(line)).toBe(0);
  });

  it("removes a reply of the user's waiting out a 429 with their other jobs: it is never sent, and no job names their chat", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Throttled reply' });
    const chat = chatIds.throttledReply;
    telegram.throttle(chat, 60);
    await telegramText(chat, `/link ${(await user.post('/v1/link-codes')).body.code}`);
    const deliveries = new Queue('deliveries', { connection: redis, prefix: system.prefix });
    const toChat = async () =>
      (await deliveries.getJobs(['wait', 'delayed', 'active', 'completed', 'failed'])).filter(
        (job) => job?.data.to?.chat_id === String(chat),
      );
    try {
      await system.waitFor(async () => (await toChat())[0]?.isDelayed(), 'the confirmation waiting out the 429');
      expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
      await system.waitFor(
        async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0,
        'the erasure job',
      );
      expect(await toChat()).toEqual([]);
    } finally {
      await deliveries.close();
    }
    expect(telegram.received(chat)).toEqual([]);
  });

  it('stops a long answer going out when its user is erased mid-way: no later part is sent or recorded, nor its job kept', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Cut short' });
    const chat = chatIds.cutShort;
    await linkTelegram(user, chat);
    const held = telegram.hold(chat);
    // Echoed, the answer takes four Telegram parts.
    await telegramText(chat, `long ${'word '.repeat(2_500)}`);
    await held.arrived;
    const deliveries = new Queue('deliveries', { connection: redis, prefix: system.prefix });
    try {
      const active = (await deliveries.getJobs(['active'])).find((job) => job?.data.to?.chat_id === String(chat));
      expect(active?.name).toBe('turn-event');

      expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
      await system.waitFor(
        async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0,
        'the erasure job',
      );
      held.release();
      await system.waitFor(
        async () => (await deliveries.getJobState(active?.id as string)) === 'unknown',
        'the delivery to end, leaving no job',
      );
    } finally {
      await deliveries.close();
    }
    // The part in flight when the erasure began went out; none after it.
    expect(telegram.sendAttempts(chat).filter((call) => String(call.body.text).includes('word word'))).toHaveLength(1);
    const recorded = await db.query(`SELECT COUNT(*)::int AS n FROM deliveries WHERE channel = 'telegram' AND recipient = $1`, [
      String(chat),
    ]);
    expect(recorded.rows[0].n).toBe(0);
  });

  it("drops a reminder's notice queued while its user was being erased, and keeps no job holding its text", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Noticed late' });
    expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
    await system.waitFor(
      async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0,
      'the erasure job',
    );
    // As a reminder firing while the erasure ran queues it, after the erasure removed the user's jobs.
    const deliveries = new Queue('deliveries', { connection: redis, prefix: system.prefix });
    try {
      const notice = await deliveries.add('notify', { userId: user.userId, text: 'Private reminder text' });
      await system.waitFor(
        async () => (await deliveries.getJobState(notice.id as string)) === 'unknown',
        'the notice dropped with its job',
      );
    } finally {
      await deliveries.close();
    }
  });

  it('lets the admin erase a user, and finishes an erasure whose job failed half-way', async () => {
    const user = await api.createUser(system.adminToken);
    expect(final((await user.converse('usage: before leaving')).events)).toBe('completed');
    // The job's last step fails once, after the event streams and messages are gone: its retry finishes the work.
    await db.query(`
      CREATE SEQUENCE IF NOT EXISTS test_operators_erase_once;
      CREATE OR REPLACE FUNCTION test_operators_erase_fault() RETURNS trigger AS $$
      BEGIN
        IF OLD.id = '${user.userId}' AND nextval('test_operators_erase_once') = 1 THEN RAISE EXCEPTION 'injected crash'; END IF;
        RETURN OLD;
      END $$ LANGUAGE plpgsql;
      CREATE TRIGGER test_operators_erase_fault BEFORE DELETE ON users FOR EACH ROW EXECUTE FUNCTION test_operators_erase_fault();
    `);
    try {
      expect((await admin.request('DELETE', `/v1/admin/users/${user.userId}`)).status).toBe(202);
      expect((await user.get('/v1/me')).status).toBe(401);
      expect((await admin.get('/v1/admin/users')).body.map((u: { id: string }) => u.id)).not.toContain(user.userId);
      await system.waitFor(
        async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0,
        'the erasure job',
      );
      expect((await db.query('SELECT last_value, is_called FROM test_operators_erase_once')).rows[0]).toMatchObject({ is_called: true });
    } finally {
      await db.query('DROP TRIGGER IF EXISTS test_operators_erase_fault ON users');
    }
    expect((await db.query('SELECT COUNT(*)::int AS n FROM sessions WHERE user_id = $1', [user.userId])).rows[0].n).toBe(0);
  });
});

describe('admin', () => {
  it('lists users, and a disabled user is refused over HTTP and on a chat until enabled again', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Rowdy' });
    const chat = chatIds.admin;
    await linkTelegram(user, chat);
    const listed = await admin.get('/v1/admin/users');
    expect(listed.status).toBe(200);
    expect(listed.body.find((u: { id: string }) => u.id === user.userId)).toEqual({
      id: user.userId,
      display_name: 'Rowdy',
      created_at: expect.any(String),
      disabled: false,
      daily_token_budget: null,
    });
    expect((await api.get('/v1/admin/users')).status).toBe(401);
    expect((await user.get('/v1/admin/users')).status).toBe(401);
    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { disabled: 'yes' })).status).toBe(400);
    expect((await admin.patch('/v1/admin/users/00000000-0000-4000-8000-000000000000', { disabled: true })).status).toBe(404);
    const unknown = await admin.get(`/v1/admin/users/${user.userId}`);
    expect({ status: unknown.status, code: unknown.body.error.code }).toEqual({ status: 404, code: 'not_found' });

    // A turn queued behind a slow one when the user is disabled never reaches the model.
    await user.send('slow: in flight');
    const queued = await user.send('queued behind');
    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { disabled: true })).body.disabled).toBe(true);
    const refused = await user.get('/v1/me');
    expect(refused.status).toBe(403);
    expect(refused.body.error.code).toBe('user_disabled');
    const turnsBefore = (await db.query('SELECT COUNT(*)::int AS n FROM turns WHERE user_id = $1', [user.userId])).rows[0].n;
    await telegramText(chat, 'let me in');
    await system.waitFor(() => telegram.received(chat).some((call) => String(call.body.text).includes('disabled')), 'the disabled reply');
    expect((await db.query('SELECT COUNT(*)::int AS n FROM turns WHERE user_id = $1', [user.userId])).rows[0].n).toBe(turnsBefore);

    const stopped = await system.waitFor(async () => {
      const found = await db.query<{ status: string }>(`SELECT status FROM turns WHERE id = $1 AND status = 'failed'`, [queued.turn_id]);
      return found.rows[0];
    }, 'the queued turn to stop');
    expect(stopped.status).toBe('failed');
    expect(model.requests.some((r) => userText(r.body) === 'queued behind')).toBe(false);

    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { disabled: false })).body.disabled).toBe(false);
    expect((await user.get('/v1/me')).status).toBe(200);
    await telegramText(chat, 'back again');
    await system.waitFor(() => telegram.received(chat).some((call) => call.body.text === 'echo: back again'), 'the answer once enabled');
  });
});
