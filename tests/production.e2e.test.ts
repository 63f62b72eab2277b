import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import net from 'node:net';
import { Queue } from 'bullmq';
import type pg from 'pg';
import { Api, type StreamEvent } from '../scripts/lib/api';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { injectFault, testDb } from './helpers/db';
import { afterTools, byUserText, FakeModel, userText } from '../scripts/lib/fake-model';
import { FakeTelegram } from './helpers/fake-telegram';
import { freePort, TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/** A bad day (docs/api.md#errors, issue 7): Redis restarts, SIGTERM mid-tool, floods, more workers, metrics. */
const model = new FakeModel();
let db: pg.Pool;
let removeFaults: () => Promise<void>;

beforeAll(async () => {
  await model.start();
  db = testDb();
  removeFaults = await injectFault(
    db,
    'test_production_faults',
    'folders',
    `IF NEW.name LIKE 'Drowsy%' THEN PERFORM pg_sleep(1.5); END IF;`,
  );
  model.script = byUserText({
    'folder:': (body) =>
      afterTools(body) ? { content: 'Done.' } : { toolCalls: [{ name: 'create_folder', arguments: { name: userText(body).slice(8) } }] },
    hi: () => ({ content: 'Hello!' }),
    'slow:': () => ({ content: 'Thought it over.', delayMs: 1_500 }),
  });
});

afterAll(async () => {
  await model.stop();
  await removeFaults();
  await db.end();
});

async function autonomous(api: Api, system: TestSystem) {
  return api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
}

const alive = (system: TestSystem) => [...system.processes.values()].every((child) => child.exitCode === null && child.signalCode === null);

describe('when Redis restarts', () => {
  let redis: ChildProcess;
  let port: number;
  const startRedis = async () => {
    redis = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    await waitFor(async () => {
      const probe = spawn('redis-cli', ['-p', String(port), 'ping']);
      const [code] = await once(probe, 'exit');
      return code === 0;
    }, 'redis-server answering');
  };

  it('answers 503 on /readyz during the outage, 200 after, and completes a turn sent after recovery', async () => {
    port = await freePort();
    await startRedis();
    const system = await new TestSystem().start({ env: { OPENAI_BASE_URL: model.url, REDIS_URL: `redis://127.0.0.1:${port}` } });
    try {
      const api = new Api(system.url);
      // A worker's own health port answers like the gateway's.
      const healthPort = await freePort();
      await system.signal('agent-worker', 'SIGTERM');
      system.spawn('agent-worker', { HEALTH_PORT: String(healthPort) });
      const worker = new Api(`http://127.0.0.1:${healthPort}`);
      await waitFor(async () => (await worker.get('/readyz').catch(() => ({ status: 0 }))).status === 200, 'worker ready');
      const user = await autonomous(api, system);
      expect((await user.converse('hi there')).events.at(-1)?.data.status).toBe('completed');

      redis.kill('SIGKILL');
      await waitFor(async () => (await api.get('/readyz')).status === 503, 'gateway not ready without Redis');
      expect((await api.get('/readyz')).body.error).toMatch(/redis/);
      await waitFor(async () => (await worker.get('/readyz')).status === 503, 'worker not ready without Redis');

      await startRedis();
      await waitFor(async () => (await api.get('/readyz')).status === 200, 'gateway ready again');
      await waitFor(async () => (await worker.get('/readyz')).status === 200, 'worker ready again');
      const after = await user.converse('folder: After outage');
      expect(after.events.at(-1)?.data.status).toBe('completed');
      expect(alive(system)).toBe(true);
      // The outage was logged as JSON lines, never as raw stack traces on stderr.
      expect(system.logs.join('')).not.toMatch(/\n\s+at .+:\d+:\d+/);
    } finally {
      await system.stop();
      redis.kill('SIGKILL');
    }
  });
});

describe('when PostgreSQL drops the connections', () => {
  /** A TCP proxy in front of the test database whose open connections can be cut (new ones still pass). */
  const sockets = new Set<net.Socket>();
  const proxy = net.createServer((client) => {
    const target = new URL(process.env.DATABASE_URL as string);
    const server = net.connect(Number(target.port || 5432), target.hostname);
    for (const socket of [client, server]) {
      sockets.add(socket);
      socket.on('error', () => undefined).on('close', () => sockets.delete(socket));
    }
    client.pipe(server).pipe(client);
  });
  const cut = () => {
    for (const socket of sockets) socket.destroy();
  };

  it('loses no process that holds a connection in a transaction: the tool runs again and is done once', async () => {
    await new Promise<void>((resolve) => proxy.listen(0, '127.0.0.1', resolve));
    const url = new URL(process.env.DATABASE_URL as string);
    url.host = `127.0.0.1:${(proxy.address() as net.AddressInfo).port}`;
    const system = await new TestSystem().start({ env: { OPENAI_BASE_URL: model.url, DATABASE_URL: url.toString() } });
    try {
      const user = await autonomous(new Api(system.url), system);
      const { turn_id: turnId } = await user.send('folder: Drowsy cut');
      // The tool's transaction is open (its insert sleeps in the database) when every connection drops.
      await waitFor(
        async () =>
          (await db.query(`SELECT 1 FROM pg_stat_activity WHERE datname = current_database() AND wait_event = 'PgSleep'`)).rowCount === 1,
        'the tool inside its transaction',
      );
      cut();
      const events = await user.events(turnId);
      expect(events.at(-1)?.data.status).toBe('completed');
      expect(alive(system)).toBe(true);
      const folders = await db.query('SELECT 1 FROM folders WHERE user_id = $1', [user.userId]);
      expect(folders.rowCount).toBe(1);
      expect(system.logs.join('')).not.toMatch(/\n\s+at .+:\d+:\d+/);
    } finally {
      await system.stop();
      proxy.close();
      cut();
    }
  });
});

describe('with a running system', () => {
  const system = new TestSystem();
  let api: Api;

  beforeAll(async () => {
    await system.start({ env: { OPENAI_BASE_URL: model.url, RATE_LIMIT_MESSAGES_PER_MINUTE: '30' } });
    api = new Api(system.url);
  });
  afterAll(() => system.stop());

  it('lets a tool finish when its worker gets SIGTERM, exits 0, and the turn completes', async () => {
    const user = await autonomous(api, system);
    const { turn_id: turnId } = await user.send('folder: Drowsy');
    await user.events(turnId, { until: (event) => event.event === 'tool_start' });
    expect(await system.signal('tool-worker', 'SIGTERM')).toBe(0);
    const events = await user.events(turnId);
    expect(events.at(-1)?.data.status).toBe('completed');
    const rows = await db.query('SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1', [user.userId]);
    expect(rows.rows[0].n).toBe(1);
    system.spawn('tool-worker');
  });

  it('lets a model call finish when its agent worker gets SIGTERM, and never calls the model again for it', async () => {
    const user = await autonomous(api, system);
    const asked = () => model.requests.filter((request) => userText(request.body) === 'slow: a hard one').length;
    const { turn_id: turnId } = await user.send('slow: a hard one');
    // The call is parked (it takes longer than a job keeps its slot) when the worker is told to stop.
    await waitFor(() => asked() === 1, 'the model asked');
    expect(await system.signal('agent-worker', 'SIGTERM')).toBe(0);
    system.spawn('agent-worker');
    const events = await user.events(turnId);
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(events.find((event) => event.event === 'message')?.data.content).toBe('Thought it over.');
    expect(asked()).toBe(1);
  });

  it('answers 429 with Retry-After past the message limit, without affecting other users', async () => {
    const flooder = await api.createUser(system.adminToken);
    const other = await api.createUser(system.adminToken);
    const answers = await Promise.all(Array.from({ length: 40 }, () => flooder.post('/v1/messages', { text: 'hi flood' })));
    const limited = answers.filter((res) => res.status === 429);
    expect(answers.filter((res) => res.status === 202)).toHaveLength(30);
    expect(limited).toHaveLength(10);
    expect(Number(limited[0]?.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(limited[0]?.body.error.code).toBe('rate_limited');
    expect((await other.post('/v1/messages', { text: 'hi from someone else' })).status).toBe(202);
  });

  it('shows non-zero counters for turns, tool calls and model calls on /metrics', async () => {
    const user = await autonomous(api, system);
    await user.converse('folder: Metered');
    const text = String((await api.get('/metrics')).body);
    expect(text).toMatch(/^assistant_turns_total\{status="completed"\} [1-9]/m);
    expect(text).toMatch(/^assistant_tool_calls_total\{outcome="success",tool="create_folder"\} [1-9]/m);
    expect(text).toMatch(/^assistant_model_calls_total\{outcome="success"\} [1-9]/m);
    expect(text).toMatch(/^assistant_http_requests_total\{/m);
    expect(text).toMatch(/^assistant_queue_jobs\{queue="agent-turns",state="completed"\} /m);
  });

  it('stops a second gateway on the port taken, saying so and never that it listens', async () => {
    const second = system.spawn('gateway', { LOG_LEVEL: 'info' }, 'second-gateway');
    const [code] = (await once(second, 'exit')) as [number | null];
    expect(code).toBe(1);
    const logs = system.logs.filter((line) => line.startsWith('[second-gateway]')).join('');
    expect(logs).toContain('gateway could not listen');
    expect(logs).not.toContain('gateway listening');
  });

  it('serves bull-board behind the admin token', async () => {
    const refused = await api.get('/admin/queues');
    expect(refused.status).toBe(401);
    expect(refused.headers.get('www-authenticate')).toBe('Basic realm="assistant admin"');
    const res = await fetch(`${system.url}/admin/queues`, {
      headers: { authorization: `Basic ${Buffer.from(`admin:${system.adminToken}`).toString('base64')}` },
    });
    expect(res.status).toBe(200);
    const queues = await api.as(system.adminToken).get('/admin/queues/api/queues');
    expect(queues.body.queues.map((queue: { name: string }) => queue.name).sort()).toEqual([
      'agent-turns',
      'deliveries',
      'reminders',
      'session-digests',
      'tool-calls',
    ]);
  });
});

describe('scaled out', () => {
  const system = new TestSystem();

  beforeAll(async () => {
    await system.start({ env: { OPENAI_BASE_URL: model.url, RATE_LIMIT_MESSAGES_PER_MINUTE: '0' } });
    system.spawn('agent-worker', {}, 'agent-worker-2');
    system.spawn('tool-worker', {}, 'tool-worker-2');
  });
  afterAll(() => system.stop());

  it('completes 200 turns across 20 sessions on two agent and two tool workers, in order per session', async () => {
    const api = new Api(system.url);
    const user = await autonomous(api, system);
    const sessions = Array.from({ length: 20 }, (_, s) => `agent:main:api:direct:scale${s}`);
    const sent: { turnId: string; session: string; text: string }[] = [];
    await Promise.all(
      sessions.map(async (session, s) => {
        for (let k = 0; k < 10; k++) {
          const text = `folder: Scale ${s}-${k}`;
          sent.push({ turnId: (await user.send(text, session)).turn_id, session, text });
        }
      }),
    );
    const streams = await Promise.all(sent.map((turn) => user.events(turn.turnId, { timeoutMs: 120_000 })));
    for (const events of streams) {
      expect(events.at(-1)?.data.status).toBe('completed');
      expect(events.map((event: StreamEvent) => event.data.seq)).toEqual(events.map((_, i) => i + 1));
    }
    for (const [s, session] of sessions.entries()) {
      const firstCalls = model.requests
        .filter((request) => userText(request.body).startsWith(`folder: Scale ${s}-`) && !afterTools(request.body))
        .map((request) => userText(request.body));
      expect(firstCalls).toEqual(sent.filter((turn) => turn.session === session).map((turn) => turn.text));
    }
  }, 180_000);
});

describe('scaled out, one gateway without a channel', () => {
  const system = new TestSystem();
  const telegram = new FakeTelegram();
  const secret = 'production-tg-secret';
  const webhooks = new ChannelWebhooks(() => system.url, secret, 'unused');

  beforeAll(async () => {
    await telegram.start();
    await system.start({
      env: {
        OPENAI_BASE_URL: model.url,
        TELEGRAM_BOT_TOKEN: '123456:production-token',
        TELEGRAM_WEBHOOK_SECRET: secret,
        TELEGRAM_API_BASE_URL: telegram.url,
      },
    });
    // A copy set up apart (say, while new settings roll out): it takes deliveries like every gateway.
    const port = await freePort();
    system.spawn('gateway', { PORT: String(port), TELEGRAM_BOT_TOKEN: '' }, 'gateway-without-telegram');
    await system.waitFor(
      async () => (await fetch(`http://127.0.0.1:${port}/readyz`).catch(() => undefined))?.status === 200,
      'the second gateway',
    );
  });
  afterAll(async () => {
    await system.stop();
    await telegram.stop();
  });

  it('still answers every chat, once: the gateway without it hands its deliveries back', async () => {
    const chats = Array.from({ length: 12 }, () => webhooks.nextId());
    for (const chat of chats) expect((await webhooks.postTelegram(webhooks.tgText(chat, 'hi'))).status).toBe(200);
    await system.waitFor(() => chats.every((chat) => telegram.received(chat).length > 0), 'an answer in every chat');
    // Another message per chat, answered after the first: nothing of the first comes twice.
    for (const chat of chats) await webhooks.postTelegram(webhooks.tgText(chat, 'hi'));
    await system.waitFor(() => chats.every((chat) => telegram.received(chat).length >= 2), 'a second answer in every chat');
    expect(chats.map((chat) => telegram.received(chat).map((call) => call.body.text))).toEqual(chats.map(() => ['Hello!', 'Hello!']));
  });

  it("sends each user's notice, once, though the gateway without their channel took it", async () => {
    const chats = Array.from({ length: 8 }, () => webhooks.nextId());
    for (const chat of chats) expect((await webhooks.postTelegram(webhooks.tgText(chat, 'hi'))).status).toBe(200);
    await system.waitFor(() => chats.every((chat) => telegram.received(chat).length > 0), 'an answer in every chat');
    const users = await db.query<{ user_id: string }>(
      `SELECT user_id FROM channel_identities WHERE channel = 'telegram' AND external_id = ANY($1)`,
      [chats.map(String)],
    );
    const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const deliveries = new Queue('deliveries', { connection, prefix: system.prefix });
    try {
      for (const { user_id } of users.rows)
        await deliveries.add('notify', { userId: user_id, text: 'Drink water' }, { jobId: `notify.${user_id}` });
      await system.waitFor(() => chats.every((chat) => telegram.received(chat).length >= 2), 'a notice in every chat');
    } finally {
      await deliveries.close();
    }
    expect(chats.map((chat) => telegram.received(chat).map((call) => call.body.text))).toEqual(chats.map(() => ['Hello!', 'Drink water']));
  });
});

describe('a process dying between a commit and its publish', () => {
  const system = new TestSystem();

  beforeAll(() => system.start({ env: { OPENAI_BASE_URL: model.url, OUTBOX_SWEEP_MS: '300' } }));
  afterAll(() => system.stop());

  it('still runs a message whose gateway committed it but never queued its job', async () => {
    const api = new Api(system.url);
    const user = await autonomous(api, system);
    // What the gateway commits for a message, as if it was killed right after the commit.
    const turn = await db.query<{ id: string }>(
      `WITH session AS (INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main') RETURNING id)
       INSERT INTO turns (user_id, session_id, session_key, input, outbox)
       SELECT $1, session.id, 'agent:main:main', 'hi orphan',
              jsonb_build_array(jsonb_build_object('key', gen_random_uuid(), 'kind', 'job', 'queue', 'agent-turns',
                'name', 'lane', 'data', jsonb_build_object('sessionId', session.id), 'jobId', 'lane.' || gen_random_uuid()))
       FROM session RETURNING turns.id`,
      [user.userId],
    );
    const events = await user.events(turn.rows[0]?.id as string, { timeoutMs: 20_000 });
    expect(events.at(-1)?.data.status).toBe('completed');
  });
});
