import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { reminderFireJobId, reminderNoticeJobId } from '@assistant/shared';
import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { injectFault, testDb } from './helpers/db';
import { FakeTelegram } from './helpers/fake-telegram';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { HeldReplies, trailingUserTexts } from './helpers/held-model';
import { TestSystem } from '../scripts/lib/system';

/**
 * A Redis that comes back empty (restarted without persistence, its keys flushed) while
 * turns are in flight (docs/architecture.md#recovering-lost-jobs): PostgreSQL still knows what
 * each unfinished turn waits for, and the agent workers' stuck-turn sweep queues it again.
 */
const model = new FakeModel();
const system = new TestSystem();
const held = new HeldReplies();
const telegram = new FakeTelegram();
const TG_SECRET = 'tg-redis-loss-secret';
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, 'no-whatsapp-here');
let redis: Redis;
let api: Api;
let db: pg.Pool;
let removeFaults: () => Promise<void>;

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start()]);
  model.script = (body) => {
    const text = userText(body);
    if (text.startsWith('hold ') && !held.isHeld(text) && !released.has(text)) return held.hold(text);
    const folder = /^make (.+)$/.exec(text)?.[1];
    if (folder && !afterTools(body)) return { toolCalls: [{ name: 'create_folder', arguments: { name: folder } }] };
    return { content: `echo: ${trailingUserTexts(body).join(' | ')}` };
  };
  db = testDb();
  // "Sleepy…" folders take 2 s to insert: long enough to kill their tool worker mid-tool. Each try counts, kept or not.
  await db.query('CREATE SEQUENCE IF NOT EXISTS test_redis_loss_tries');
  removeFaults = await injectFault(
    db,
    'test_redis_loss',
    'folders',
    `IF NEW.name LIKE 'Sleepy%' THEN PERFORM nextval('test_redis_loss_tries'); PERFORM pg_sleep(2); END IF;`,
  );
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
  // A lost model call's or tool's job is queued again only after its timeout (a tool's: three): keep them short.
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      STUCK_TURN_SWEEP_MS: '500',
      MODEL_TIMEOUT_MS: '5000',
      TOOL_TIMEOUT_MS: '4000',
      // Sessions are digested soon after their last message, so a lost digest shows.
      SESSION_IDLE_SECONDS: '3',
      TRANSCRIPTION_MODEL: 'whisper-test',
      TELEGRAM_BOT_TOKEN: '123456:redis-loss',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
      TELEGRAM_BOT_USERNAME: telegram.bot.username,
    },
  });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  held.releaseAll();
  await system.stop();
  await Promise.all([model.stop(), telegram.stop()]);
  await removeFaults();
  await db.end();
  redis.disconnect();
});

/** Requests the model answers at once from now on: a second call after a crash is not held again. */
const released = new Set<string>();

/** Deletes every key of the test's prefix (queues, event streams, counters), as a Redis restarted without its data. */
async function loseRedis(): Promise<void> {
  const keys = await redis.keys(`${system.prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
}

it('finishes a turn and the session’s next one when Redis loses its data while its agent worker is down mid model call', async () => {
  const user = await api.createUser(system.adminToken);
  const first = await user.send('hold the thought');
  await system.waitFor(() => held.isHeld('hold the thought'), 'the model call');
  const second = await user.send('and after it');
  await system.signal('agent-worker', 'SIGKILL');
  await loseRedis();
  released.add('hold the thought');
  held.release('hold the thought');
  system.spawn('agent-worker');

  expect((await user.events(first.turn_id)).at(-1)?.data.status).toBe('completed');
  const events = await user.events(second.turn_id);
  expect(events.find((event) => event.event === 'message')?.data.content).toBe('echo: and after it');
  expect(events.at(-1)?.data.status).toBe('completed');
});

it('finishes a turn whose Redis loses its data while its model call is held', async () => {
  const user = await api.createUser(system.adminToken);
  const first = await user.send('hold on');
  await system.waitFor(() => held.isHeld('hold on'), 'the model call');
  const second = await user.send('then this');
  await loseRedis();
  released.add('hold on');
  held.release('hold on');

  expect((await user.events(first.turn_id)).at(-1)?.data.status).toBe('completed');
  expect((await user.events(second.turn_id)).at(-1)?.data.status).toBe('completed');
});

it('runs a tool once when Redis loses its data while its tool worker is down mid tool', async () => {
  const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const { turn_id: turnId } = await user.send('make Sleepy notes');
  await user.events(turnId, { until: (event) => event.event === 'tool_start' });
  await system.signal('tool-worker', 'SIGKILL');
  await loseRedis();
  system.spawn('tool-worker');

  const events = await user.events(turnId);
  expect(events.filter((event) => event.event === 'tool_complete')).toHaveLength(1);
  expect(events.at(-1)?.data.status).toBe('completed');
  const folders = await db.query('SELECT 1 FROM folders WHERE user_id = $1 AND name = $2', [user.userId, 'Sleepy notes']);
  expect(folders.rowCount).toBe(1);
});

/** How many times a tool has tried to insert a "Sleepy…" folder. */
async function sleepyTries(): Promise<number> {
  const found = await db.query<{ tries: string }>(
    'SELECT CASE WHEN is_called THEN last_value ELSE 0 END AS tries FROM test_redis_loss_tries',
  );
  return Number(found.rows[0]?.tries);
}

const texts = (chat: number) => telegram.received(chat).map((call) => String(call.body.text));

it('sends a chat answer once when Redis loses its delivery job after the turn has ended, and no sent one again', async () => {
  const chat = webhooks.nextId();
  expect((await webhooks.postTelegram(webhooks.tgText(chat, 'sent before'))).status).toBe(200);
  await system.waitFor(() => texts(chat).includes('echo: sent before'), 'the answer sent before');
  expect((await webhooks.postTelegram(webhooks.tgText(chat, 'hold the reply'))).status).toBe(200);
  await system.waitFor(() => held.isHeld('hold the reply'), 'the model call');
  // No gateway takes the answer's delivery job: the turn ends with it only in Redis.
  await system.signal('gateway', 'SIGKILL');
  released.add('hold the reply');
  held.release('hold the reply');
  await system.waitFor(async () => {
    const ended = await db.query(`SELECT 1 FROM turns WHERE input = 'hold the reply' AND status = 'completed' AND outbox = '[]'`);
    return ended.rowCount === 1;
  }, 'the turn to end with its outbox published');
  await loseRedis();
  system.spawn('gateway');
  await system.waitReady();

  await system.waitFor(() => texts(chat).includes('released hold the reply'), 'the answer');
  expect((await webhooks.postTelegram(webhooks.tgText(chat, 'and then'))).status).toBe(200);
  // The chat's line keeps the next answer behind the first: once it arrives, nothing more of the first comes.
  await system.waitFor(() => texts(chat).includes('echo: and then'), 'the next answer');
  expect(texts(chat)).toEqual(['echo: sent before', 'released hold the reply', 'echo: and then']);
});

/** Fires a reminder of the user's, due now, as its job would; answers the id of its notice's delivery job, once queued. */
async function fireReminderNow(userId: string, text: string): Promise<string> {
  const inserted = await db.query<{ id: string; at: Date }>(
    `INSERT INTO reminders (id, user_id, text, text_key, at) VALUES (gen_random_uuid(), $1, $2, $3, NOW()) RETURNING id, at`,
    [userId, text, text.toLowerCase()],
  );
  const { id, at } = inserted.rows[0] as { id: string; at: Date };
  const reminders = new Queue('reminders', { connection: redis, prefix: system.prefix });
  const deliveries = new Queue('deliveries', { connection: redis, prefix: system.prefix });
  try {
    await reminders.add('fire', { reminderId: id, at: at.toISOString() }, { jobId: reminderFireJobId(id, at) });
    let notice = '';
    await system.waitFor(async () => {
      const fired = await db.query<{ last_fired_at: Date }>(
        'SELECT last_fired_at FROM reminders WHERE id = $1 AND last_fired_at IS NOT NULL',
        [id],
      );
      notice = fired.rows[0] ? reminderNoticeJobId(id, fired.rows[0].last_fired_at) : '';
      return notice !== '' && (await deliveries.getJobState(notice)) !== 'unknown';
    }, 'the reminder’s notice queued');
    return notice;
  } finally {
    await Promise.all([reminders.close(), deliveries.close()]);
  }
}

it('sends a reminder’s notice once when Redis loses its delivery job, and no sent one again', async () => {
  const chat = webhooks.nextId();
  expect((await webhooks.postTelegram(webhooks.tgText(chat, 'hello notices'))).status).toBe(200);
  await system.waitFor(() => texts(chat).includes('echo: hello notices'), 'the first answer');
  const identity = await db.query<{ user_id: string }>('SELECT user_id FROM channel_identities WHERE channel = $1 AND external_id = $2', [
    'telegram',
    String(chat),
  ]);
  const userId = identity.rows[0]?.user_id as string;
  const sent = await fireReminderNow(userId, 'Notice sent before');
  await system.waitFor(() => texts(chat).includes('Notice sent before'), 'the notice sent before');
  // No gateway takes the next notice's delivery job: the reminder has fired, its notice only in Redis.
  await system.signal('gateway', 'SIGKILL');
  await fireReminderNow(userId, 'Notice lost');
  await loseRedis();
  system.spawn('gateway');
  await system.waitReady();

  await system.waitFor(() => texts(chat).includes('Notice lost'), 'the lost notice');
  const deliveries = new Queue('deliveries', { connection: redis, prefix: system.prefix });
  try {
    // The notice sent before is queued again too, and its delivery ends without sending it.
    await system.waitFor(async () => (await deliveries.getJobState(sent)) === 'completed', 'the notice sent before, queued again');
  } finally {
    await deliveries.close();
  }
  expect(texts(chat)).toEqual(['echo: hello notices', 'Notice sent before', 'Notice lost']);
});

it('digests a session whose idle digest job Redis lost', async () => {
  const user = await api.createUser(system.adminToken);
  const { events } = await user.converse('remember the plums');
  expect(events.at(-1)?.data.status).toBe('completed');
  const digested = await db.query<{ digested_until: number }>('SELECT digested_until FROM sessions WHERE user_id = $1', [user.userId]);
  // The digest waits for the session to be idle a while: its delayed job is lost before it runs.
  expect(digested.rows[0]?.digested_until).toBe(0);
  await loseRedis();

  await system.waitFor(async () => {
    const found = await db.query('SELECT 1 FROM sessions WHERE user_id = $1 AND digested_until > 0', [user.userId]);
    return found.rowCount === 1;
  }, 'the session digested');
});

it('ends a turn cancelled while Redis had lost its running tool’s job with done', async () => {
  const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const { turn_id: turnId } = await user.send('make Sleepy plans');
  await user.events(turnId, { until: (event) => event.event === 'tool_start' });
  await system.signal('tool-worker', 'SIGKILL');
  await loseRedis();
  expect((await user.request('POST', `/v1/turns/${turnId}/cancel`)).status).toBe(202);
  system.spawn('tool-worker');

  const events = await user.events(turnId);
  expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'cancelled' });
});

it('runs a tool once when Redis loses its data while it runs, after its job waited longer than it may run', async () => {
  const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  await system.signal('tool-worker', 'SIGKILL');
  const { turn_id: turnId } = await user.send('make Sleepy drafts');
  // No tool worker takes the job until the tool has been dispatched longer than it may run (three TOOL_TIMEOUT_MS).
  await system.waitFor(async () => {
    const waited = await db.query(`SELECT 1 FROM tasks WHERE turn_id = $1 AND started_at < NOW() - interval '12 seconds'`, [turnId]);
    return waited.rowCount === 1;
  }, 'the tool job to wait three tool timeouts');
  const tries = await sleepyTries();
  system.spawn('tool-worker');
  await user.events(turnId, { until: (event) => event.event === 'tool_start' });
  await loseRedis();

  expect((await user.events(turnId)).at(-1)?.data.status).toBe('completed');
  expect(await sleepyTries()).toBe(tries + 1);
});

it('calls the transcription API for a voice note no more often than its job’s attempts when Redis loses the job between them', async () => {
  const chat = webhooks.nextId();
  const audio = 'audio nobody can transcribe';
  // The transcription service is down: each attempt fails, and the job retries after its backoff.
  model.transcribe = (request) => (request.audio === audio ? { status: 503 } : { text: request.audio });
  const calls = () => model.transcriptions.filter((request) => request.audio === audio).length;
  telegram.addFile('voice-down', 'voice/down.oga', audio);
  expect((await webhooks.postTelegram(webhooks.tgVoice(chat, 'voice-down'))).status).toBe(200);
  await system.waitFor(() => calls() >= 2, 'a second transcription attempt');
  await loseRedis();

  await system.waitFor(() => texts(chat).some((text) => text.includes('could not make out that voice note')), 'the apology');
  // The queue's default: five attempts.
  expect(calls()).toBeLessThanOrEqual(5);
});
