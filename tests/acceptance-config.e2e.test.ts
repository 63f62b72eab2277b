import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import path from 'node:path';
import { Redis } from 'ioredis';
import { Api } from '../scripts/lib/api';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { redisAnswers } from '../scripts/lib/private-redis';
import { freePort, TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { FakeTelegram } from './helpers/fake-telegram';

/**
 * CONTRACT §1 and §2 as an operator relies on them. Sharing one Redis between deployments: every
 * key the processes touch, and every channel they publish on, is under QUEUE_PREFIX (the
 * processes run against a Redis of this test's own, whose every command is watched: MONITOR).
 * Starting with settings missing or wrong: what each process says and answers.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const system = new TestSystem();
const TG_SECRET = 'acceptance-config-tg-secret';
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, 'unused-whatsapp-secret');
const DIGEST = 'Digest of the acceptance chat';
let redisServer: ChildProcess;
let monitor: Redis;
let client: Redis;
const commands: string[][] = [];

beforeAll(async () => {
  const port = await freePort();
  const url = `redis://127.0.0.1:${port}`;
  redisServer = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  await waitFor(() => redisAnswers(url), 'the private redis-server');
  client = new Redis(url);
  monitor = await client.monitor();
  monitor.on('monitor', (_time: string, args: string[]) => commands.push(args));

  await Promise.all([model.start(), telegram.start()]);
  model.script = (body) => {
    if (String(body.messages[0]?.content).startsWith('You write session digests')) return { content: DIGEST };
    const reminder = /^remind: (.+) at (.+)$/.exec(userText(body));
    if (reminder && !afterTools(body))
      return { toolCalls: [{ name: 'create_reminder', arguments: { text: reminder[1], at: reminder[2] } }] };
    return { content: afterTools(body) ? 'Done.' : `echo: ${userText(body)}` };
  };
  await system.start({
    env: {
      REDIS_URL: url,
      OPENAI_BASE_URL: model.url,
      SESSION_IDLE_SECONDS: '2',
      TELEGRAM_BOT_TOKEN: '123456:acceptance-config-token',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
    },
  });
});

afterAll(async () => {
  await system.stop();
  await Promise.all([model.stop(), telegram.stop()]);
  monitor?.disconnect();
  client?.disconnect();
  redisServer.kill('SIGTERM');
  await once(redisServer, 'exit');
});

/** The keys a command names, as Redis itself reads them (none for a command that has none). */
async function keysOf(args: string[]): Promise<string[]> {
  const [name, ...rest] = args;
  if (!name || /^(publish|spublish|subscribe|psubscribe|ssubscribe|unsubscribe|punsubscribe)$/i.test(name)) return [];
  return ((await client.call('COMMAND', 'GETKEYS', name, ...rest).catch(() => [])) as string[]) ?? [];
}

/** The channels a command publishes or listens on. */
function channelsOf([name, ...rest]: string[]): string[] {
  if (/^(publish|spublish)$/i.test(name ?? '')) return rest.slice(0, 1);
  return /^(subscribe|psubscribe|ssubscribe)$/i.test(name ?? '') ? rest : [];
}

it('keeps every key and channel under QUEUE_PREFIX through a chat turn, an approval, a reminder, a digest, a stream and an erasure', async () => {
  const api = new Api(system.url);
  const user = await api.createUser(system.adminToken, { name: 'Prefixed' });
  const chat = 7_900_001;
  const link = await user.post('/v1/link-codes');
  expect((await webhooks.postTelegram(webhooks.tgText(chat, `/link ${link.body.code}`))).status).toBe(200);
  await system.waitFor(() => telegram.received(chat).some((call) => String(call.body.text).startsWith('Linked')), 'the link confirmation');

  // A chat turn in manual mode: the reminder waits for its approval, given over HTTP.
  const at = new Date(Date.now() + 8_000).toISOString();
  expect((await webhooks.postTelegram(webhooks.tgText(chat, `remind: Prefixed reminder at ${at}`))).status).toBe(200);
  const approval = await system.waitFor(async () => (await user.get('/v1/approvals?status=pending')).body[0], 'the approval');
  expect((await user.post(`/v1/approvals/${approval.id}`, { decision: 'approve' })).status).toBe(200);
  await system.waitFor(() => telegram.received(chat).some((call) => call.body.text === 'Prefixed reminder'), 'the reminder');

  // A turn read over SSE, then the idle sessions' digests.
  expect((await user.converse('over http')).events.at(-1)?.data.status).toBe('completed');
  await system.waitFor(async () => String((await user.get('/v1/profile')).body.memory).includes(DIGEST), 'a digest in MEMORY', {
    timeoutMs: 30_000,
  });

  // And the user's erasure, which removes their keys.
  expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
  const admin = api.as(system.adminToken);
  await system.waitFor(
    async () => !(await admin.get('/v1/admin/users')).body.some((listed: { id: string }) => listed.id === user.userId),
    'the user erased',
  );

  const keys = new Set((await Promise.all(commands.map(keysOf))).flat());
  const channels = new Set(commands.flatMap(channelsOf));
  // The queues, by their names in CONTRACT §1: BullMQ keeps each one's settings in `<prefix>:<name>:meta`.
  const queues = [...keys].flatMap((key) => new RegExp(`^${system.prefix}:([^:]+):meta$`).exec(key)?.slice(1) ?? []);
  expect(queues.sort()).toEqual(['agent-turns', 'deliveries', 'reminders', 'session-digests', 'tool-calls']);
  expect([...keys].filter((key) => !key.startsWith(`${system.prefix}:`))).toEqual([]);
  expect([...channels].filter((channel) => !channel.startsWith(`${system.prefix}:`))).toEqual([]);
  expect((await client.keys('*')).filter((key) => !key.startsWith(`${system.prefix}:`))).toEqual([]);
});

describe('a gateway without ADMIN_TOKEN, its channels half set up', () => {
  let gateway: Api;
  let output = '';

  beforeAll(async () => {
    const port = await freePort();
    const env = { PORT: String(port), LOG_LEVEL: 'info', ADMIN_TOKEN: ' ', TELEGRAM_WEBHOOK_SECRET: '', WHATSAPP_ACCESS_TOKEN: 'wa-token' };
    const child = system.spawn('gateway', env, 'unconfigured');
    child.stdout?.on('data', (chunk: Buffer) => (output += chunk.toString('utf8')));
    gateway = new Api(`http://127.0.0.1:${port}`);
    await system.waitFor(async () => (await gateway.get('/healthz').catch(() => undefined))?.status === 200, 'the gateway answering');
  });
  afterAll(() => system.signal('unconfigured', 'SIGTERM'));

  it.each([
    ['POST', '/v1/users'],
    ['GET', '/admin/queues'],
    ['GET', '/admin/queues/api/queues'],
    ['GET', '/v1/admin/users'],
  ])('answers %s %s 503, saying ADMIN_TOKEN is not set', async (method, url) => {
    const res = await gateway.request(method, url, method === 'POST' ? { display_name: 'Nobody' } : undefined);
    expect([res.status, res.body.error.message]).toEqual([503, expect.stringMatching(/ADMIN_TOKEN is not set/)]);
  });

  it('answers 404 on the webhooks of both channels, and says in its log which settings keep each off', async () => {
    const statuses = await Promise.all([
      new ChannelWebhooks(() => gateway.baseUrl, TG_SECRET, '').postTelegram(webhooks.tgText(7_900_002, 'hello')).then((res) => res.status),
      fetch(`${gateway.baseUrl}/webhooks/whatsapp?hub.mode=subscribe&hub.verify_token=x&hub.challenge=1`).then((res) => res.status),
      fetch(`${gateway.baseUrl}/webhooks/whatsapp`, { method: 'POST', body: '{}' }).then((res) => res.status),
    ]);
    expect(statuses).toEqual([404, 404, 404]);
    expect(output).toContain('telegram is off: TELEGRAM_WEBHOOK_SECRET not set');
    expect(output).toContain('whatsapp is off: WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN, WHATSAPP_PHONE_NUMBER_ID not set');
  });
});

it.each(['gateway', 'agent-worker', 'tool-worker'])('stops the %s at start with one line per problem, and no stack trace', (service) => {
  const run = spawnSync(process.execPath, [path.join(__dirname, '..', 'services', service, 'dist', 'main.js')], {
    env: {
      PATH: process.env.PATH,
      PORT: '80.5',
      LLM_PROVIDER: 'openai',
      MCP_SERVERS: '{"name":"notes"}',
      DEFAULT_TIMEZONE: 'Mars/Olympus_Mons',
      VISION: 'yes',
      REDIS_URL: 'localhost:6379',
    },
    encoding: 'utf8',
    timeout: 30_000,
  });
  expect(run.status).toBe(1);
  expect(run.stderr.trimEnd().split('\n')).toEqual([
    'invalid configuration:',
    '  PORT: must be a whole number from 0 to 65535',
    '  REDIS_URL: must start with redis://',
    '  DEFAULT_TIMEZONE: unknown IANA time zone "Mars/Olympus_Mons"',
    '  MCP_SERVERS: must be a JSON array of MCP servers (see README, "MCP servers")',
    '  VISION: must be true or false',
    '  LLM_PROVIDER: openai needs OPENAI_API_KEY (for api.openai.com) or OPENAI_BASE_URL (another OpenAI-compatible endpoint)',
  ]);
  expect(run.stdout).toBe('');
});
