import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { eraseUserJobId } from '@assistant/shared';
import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeGraph } from './helpers/fake-graph';
import { FakeTelegram } from './helpers/fake-telegram';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/**
 * DELETE /v1/me leaves nothing of the user anywhere (docs/api.md#operators): a user who used every way
 * in (HTTP, Telegram, WhatsApp, a voice note, reminders, approvals, link codes, API keys) is erased,
 * then every Redis key of the system's prefix and every table is searched for their id, their chat
 * id, their number and the words they sent.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const graph = new FakeGraph();
const system = new TestSystem();
const TG_SECRET = 'erasure-tg-secret';
const WA_SECRET = 'erasure-wa-secret';
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, WA_SECRET);
let db: pg.Pool;
let redis: Redis;

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start(), graph.start()]);
  model.script = (body) => {
    const text = userText(body);
    const [, reminder, at] = /^remind: (.+) at (.+)$/.exec(text) ?? [];
    if (reminder && at && !afterTools(body)) {
      return { toolCalls: [{ name: 'create_reminder', arguments: { text: reminder, at, repeat: 'daily' } }] };
    }
    return { content: `echo: ${text}` };
  };
  db = testDb();
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: '424243:erasure-token',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
      ...graph.settings(WA_SECRET),
    },
  });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), telegram.stop(), graph.stop()]);
  await redis.quit();
  await db.end();
});

/** Every Redis key of the system's prefix, each with its name and everything it holds, as text. */
async function redisContents(): Promise<Map<string, string>> {
  const contents = new Map<string, string>();
  let cursor = '0';
  do {
    const [next, keys] = await redis.scan(cursor, 'MATCH', `${system.prefix}:*`, 'COUNT', 1000);
    for (const key of keys) {
      const type = await redis.type(key);
      const value =
        type === 'string'
          ? await redis.get(key)
          : type === 'hash'
            ? await redis.hgetall(key)
            : type === 'list'
              ? await redis.lrange(key, 0, -1)
              : type === 'set'
                ? await redis.smembers(key)
                : type === 'zset'
                  ? await redis.zrange(key, 0, -1)
                  : type === 'stream'
                    ? await redis.xrange(key, '-', '+')
                    : null;
      contents.set(key, JSON.stringify(value));
    }
    cursor = next;
  } while (cursor !== '0');
  return contents;
}

/** Each table whose rows (as JSON text) hold `needle`, with how many rows do. */
async function tablesHolding(needle: string): Promise<string[]> {
  const tables = await db.query<{ table_name: string }>(
    `SELECT table_name FROM information_schema.tables WHERE table_schema = current_schema() AND table_type = 'BASE TABLE'`,
  );
  const found: string[] = [];
  for (const { table_name: table } of tables.rows) {
    const n = await db.query(`SELECT COUNT(*)::int AS n FROM "${table}" t WHERE to_jsonb(t)::text LIKE '%' || $1 || '%'`, [needle]);
    if (n.rows[0].n > 0) found.push(`${table}: ${n.rows[0].n}`);
  }
  return found;
}

it('leaves no key, value or row naming a user who used every feature, nor their chats or words', async () => {
  const marker = `zqx${randomUUID().slice(0, 8)}`;
  const chat = webhooks.nextId();
  const phone = `5511${webhooks.nextId()}`;
  const user = await new Api(system.url).createUser(system.adminToken, { name: `Leaving ${marker}` });

  // HTTP: a second key, a gotcha, a message, and a reminder approved (manual mode).
  expect((await user.post('/v1/api-keys', { name: `key ${marker}` })).status).toBe(201);
  expect((await user.post('/v1/gotchas', { description: `gotcha ${marker}` })).status).toBe(201);
  expect((await user.converse(`http ${marker}`)).events.at(-1)?.data.status).toBe('completed');
  const at = new Date(Date.now() + 3_600_000).toISOString();
  const approved = await user.send(`remind: approved ${marker} at ${at}`);
  await user.events(approved.turn_id, { until: (event) => event.event === 'tool_approval_request' });
  const [approval] = (await user.get('/v1/approvals?status=pending')).body;
  expect((await user.post(`/v1/approvals/${approval.id}`, { decision: 'approve' })).status).toBe(200);
  expect((await user.events(approved.turn_id)).at(-1)?.data.status).toBe('completed');

  // Telegram: linked with a code, then a text and a voice note.
  const tgCode = (await user.post('/v1/link-codes')).body.code;
  expect((await webhooks.postTelegram(webhooks.tgText(chat, `/link ${tgCode}`))).status).toBe(200);
  await system.waitFor(() => telegram.received(chat).length === 1, 'the Telegram link confirmation');
  expect((await webhooks.postTelegram(webhooks.tgText(chat, `telegram ${marker}`))).status).toBe(200);
  await system.waitFor(() => telegram.received(chat).length === 2, 'the Telegram answer');
  telegram.addFile(`voice-${marker}`, `voice/${marker}.oga`, `voice ${marker}`);
  expect((await webhooks.postTelegram(webhooks.tgVoice(chat, `voice-${marker}`))).status).toBe(200);
  await system.waitFor(() => telegram.received(chat).length === 3, 'the voice note answer');

  // WhatsApp: linked with a code, then a text.
  const waCode = (await user.post('/v1/link-codes')).body.code;
  expect((await webhooks.postWhatsApp(webhooks.waText(phone, `/link ${waCode}`))).status).toBe(200);
  await system.waitFor(() => graph.received(phone).length === 1, 'the WhatsApp link confirmation');
  expect((await webhooks.postWhatsApp(webhooks.waText(phone, `whatsapp ${marker}`))).status).toBe(200);
  await system.waitFor(() => graph.received(phone).length === 2, 'the WhatsApp answer');
  // A mistyped code, its message id holding the number in base64 as Meta's do (\x1c\x18\x0d, the number, …).
  const wamid = `wamid.${Buffer.from(`\x1c\x18\x0d${phone}\x15\x02\x00${marker}`).toString('base64')}`;
  expect((await webhooks.postWhatsApp(webhooks.waText(phone, '/link WRONGCODE', wamid))).status).toBe(200);
  await system.waitFor(() => graph.received(phone).length === 3, 'the WhatsApp bad code reply');

  // Last, as it holds the main session, where the chats' messages go too.
  const pending = await user.send(`remind: pending ${marker} at ${at}`);
  await user.events(pending.turn_id, { until: (event) => event.event === 'tool_approval_request' });

  const needles = [user.userId, String(chat), phone, marker, wamid];
  // Each is somewhere first, so the search below can find it.
  const before = [...(await redisContents()).entries()];
  for (const needle of needles) {
    const inRedis = before.some(([key, value]) => key.includes(needle) || value.includes(needle));
    expect([needle, inRedis || (await tablesHolding(needle)).length > 0]).toEqual([needle, true]);
  }

  expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
  const job = `${system.prefix}:session-digests:${eraseUserJobId(user.userId)}`;
  await system.waitFor(
    async () => (await db.query('SELECT 1 FROM users WHERE id = $1', [user.userId])).rowCount === 0 && (await redis.exists(job)) === 0,
    'the erasure, and its job gone',
  );

  const after = [...(await redisContents()).entries()];
  const left: { needle: string; keys: string[]; rows: string[] }[] = [];
  for (const needle of needles) {
    left.push({
      needle,
      keys: after.filter(([key, value]) => key.includes(needle) || value.includes(needle)).map(([key]) => key.slice(system.prefix.length)),
      rows: await tablesHolding(needle),
    });
  }
  expect(left).toEqual(needles.map((needle) => ({ needle, keys: [], rows: [] })));
});
