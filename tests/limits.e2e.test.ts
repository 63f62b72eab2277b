import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { testDb } from './helpers/db';
import { FakeModel, userText } from '../scripts/lib/fake-model';
import { FakeTelegram } from './helpers/fake-telegram';
import { HeldReplies, trailingUserTexts } from './helpers/held-model';
import { TestSystem } from '../scripts/lib/system';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { fixture, telegramPrivateText } from './helpers/channel-fixtures';
import { telegramGroupText } from './helpers/telegram-updates';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * Limits that keep one user from starving the rest (docs/agent.md#limits), and documents kept out
 * of group prompts (docs/memory.md#request-layout).
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const system = new TestSystem();
const held = new HeldReplies();
const TG_SECRET = 'tg-limits-secret';
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, 'no-whatsapp-here');
const RATE = 5;
const REDIS_URL = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
let db: pg.Pool;
let redis: Redis;
let api: Api;
let turnsQueue: Queue;

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start()]);
  model.script = (body) => {
    const text = userText(body);
    if (text.startsWith('hold ')) return held.hold(text);
    return { content: `echo: ${trailingUserTexts(body).join(' | ')}` };
  };
  db = testDb();
  redis = new Redis(REDIS_URL, { maxRetriesPerRequest: null });
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      RATE_LIMIT_MESSAGES_PER_MINUTE: String(RATE),
      VISION: 'true',
      MAX_ACTIVE_TURNS_PER_USER: '2',
      TELEGRAM_BOT_TOKEN: '123456:limits',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
      TELEGRAM_BOT_USERNAME: telegram.bot.username,
    },
  });
  turnsQueue = new Queue('agent-turns', { connection: { url: REDIS_URL }, prefix: system.prefix });
  api = new Api(system.url);
});

afterAll(async () => {
  held.releaseAll();
  await system.stop();
  await turnsQueue.close();
  await Promise.all([model.stop(), telegram.stop()]);
  redis.disconnect();
  await db.end();
});

let nextUpdate = 7_700_000_000 + Math.floor(Math.random() * 1_000_000) * 100;
async function sendTelegram(chat: number, text: string): Promise<number> {
  nextUpdate += 1;
  const res = await webhooks.postTelegram(webhooks.tgText(chat, text, nextUpdate));
  expect(res.status).toBe(200);
  return nextUpdate;
}
/** A private-chat message of `chat` with `fields` (a voice note, a photo) in place of text. */
async function sendTelegramMedia(chat: number, fields: Record<string, unknown>): Promise<number> {
  nextUpdate += 1;
  const { text: _text, ...message } = fixture(telegramPrivateText).message;
  const update = {
    update_id: nextUpdate,
    message: { ...message, from: { ...message.from, id: chat }, chat: { ...message.chat, id: chat }, ...fields },
  };
  expect((await webhooks.postTelegram(update)).status).toBe(200);
  return nextUpdate;
}
const newChat = () => 7_200_000 + Math.floor(Math.random() * 1_000_000);
const identityUser = async (chat: number) =>
  (
    await db.query<{ user_id: string }>(`SELECT user_id FROM channel_identities WHERE channel = 'telegram' AND external_id = $1`, [
      String(chat),
    ])
  ).rows[0]?.user_id;

/** A chat's user, answered once, then with this window of the message rate used up for `windowMs`. */
async function overTheLimit(chat: number, windowMs: number): Promise<void> {
  await sendTelegram(chat, 'hello');
  await waitFor(() => telegram.received(chat).length === 1, 'the first answer');
  const userId = (await identityUser(chat)) as string;
  await redis.set(`${system.prefix}:ratelimit:messages:${userId}`, String(RATE), 'PX', windowMs);
}

describe('the message rate', () => {
  it('stores a chat message over the limit and merges it into a turn that starts when the limit allows', async () => {
    const chat = newChat();
    // The user has used up this window, which ends in 2 s.
    await overTheLimit(chat, 2_000);

    const updates = [await sendTelegram(chat, 'over one'), await sendTelegram(chat, 'over two'), await sendTelegram(chat, 'over three')];
    const turns = await db.query<{ id: string; start_after: Date | null }>(
      `SELECT DISTINCT t.id, t.start_after FROM channel_messages m JOIN turns t ON t.id = m.turn_id
       WHERE m.channel = 'telegram' AND m.external_id = ANY($1)`,
      [updates.map(String)],
    );
    expect(turns.rowCount).toBe(1);
    expect(turns.rows[0]?.start_after).not.toBeNull();

    await waitFor(() => telegram.received(chat).length === 2, 'the answer after the window', { timeoutMs: 15_000 });
    expect(telegram.received(chat)[1]?.body.text).toBe('echo: over one | over two | over three');
    const started = await db.query<{ early: boolean }>('SELECT started_at < start_after AS early FROM turns WHERE id = $1', [
      turns.rows[0]?.id,
    ]);
    expect(started.rows[0]?.early).toBe(false);
  });

  it('counts photos and voice transcripts too: over the limit, their turns wait for the window', async () => {
    const chat = newChat();
    await overTheLimit(chat, 3_000);
    const turnOf = async (update: number) =>
      (
        await db.query<{ start_after: Date | null; started_early: boolean | null }>(
          `SELECT t.start_after, t.started_at < t.start_after AS started_early FROM channel_messages m JOIN turns t ON t.id = m.turn_id
           WHERE m.channel = 'telegram' AND m.external_id = $1`,
          [String(update)],
        )
      ).rows[0];

    telegram.addFile(`voice-${chat}`, `voice/${chat}.oga`, 'spoken over the limit');
    const voice = await sendTelegramMedia(chat, { voice: { file_id: `voice-${chat}`, duration: 2 } });
    // The transcribe job makes the voice note's turn after the webhook has answered.
    expect((await waitFor(() => turnOf(voice), "the transcript's turn")).start_after).not.toBeNull();
    telegram.addFile(`photo-${chat}`, `photos/${chat}.jpg`, 'JPEG-BYTES');
    const photo = await sendTelegramMedia(chat, {
      photo: [{ file_id: `photo-${chat}`, file_unique_id: `u${chat}`, file_size: 10, width: 800, height: 600 }],
      caption: 'over the limit too',
    });
    expect((await turnOf(photo))?.start_after).not.toBeNull();

    // The photo joined the transcript's waiting turn: one answer after the window reads both.
    await waitFor(() => telegram.received(chat).length === 2, 'the answer after the window', { timeoutMs: 15_000 });
    expect(telegram.received(chat)[1]?.body.text).toBe('echo: spoken over the limit | [photo] over the limit too');
    for (const update of [voice, photo]) expect((await turnOf(update))?.started_early).toBe(false);
  });

  it('counts chat and HTTP messages of one user together', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Linked' });
    const chat = newChat();
    await sendTelegram(chat, `/link ${(await user.post('/v1/link-codes')).body.code}`);
    await waitFor(async () => (await identityUser(chat)) === user.userId, 'the link');
    for (let i = 0; i < RATE - 2; i++) await sendTelegram(chat, `chat ${i}`);
    expect((await user.post('/v1/messages', { text: 'http 1' })).status).toBe(202);
    expect((await user.post('/v1/messages', { text: 'http 2' })).status).toBe(202);
    const over = await user.post('/v1/messages', { text: 'http 3' });
    expect(over.status).toBe(429);
    expect(Number(over.headers.get('retry-after'))).toBeGreaterThan(0);
  });

  it('does not count a message refused as invalid (400, 413)', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Clumsy' });
    const refused = [
      await user.post('/v1/messages', { text: '' }),
      await user.post('/v1/messages', { text: 5 }),
      await user.post('/v1/messages', { text: 'x'.repeat(16_001) }),
      await user.post('/v1/messages', { text: 'no such session', session_key: 'main' }),
      await user.post('/v1/messages', { text: 'what', if_busy: 'later' }),
    ];
    expect(refused.map((res) => res.status)).toEqual([400, 400, 413, 400, 400]);
    for (let i = 0; i < RATE; i++) expect((await user.post('/v1/messages', { text: `valid ${i}` })).status).toBe(202);
    expect((await user.post('/v1/messages', { text: 'one too many' })).status).toBe(429);
  });

  it('does not count a message refused as session_busy (if_busy: reject, 409)', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Patient' });
    const busy = await user.send('hold patient');
    await waitFor(() => held.isHeld('hold patient'), 'the turn in its model call');
    for (let i = 0; i < RATE; i++) {
      const refused = await user.post('/v1/messages', { text: `only if idle ${i}`, if_busy: 'reject' });
      expect(refused.status).toBe(409);
    }
    held.release('hold patient');
    await user.events(busy.turn_id);
    // One message was counted (the held one): RATE - 1 more fit in the window.
    for (let i = 1; i < RATE; i++) expect((await user.post('/v1/messages', { text: `idle now ${i}` })).status).toBe(202);
    expect((await user.post('/v1/messages', { text: 'one too many' })).status).toBe(429);
  });
});

describe('MAX_ACTIVE_TURNS_PER_USER', () => {
  it("runs at most that many of a user's turns at once; the next starts when one ends", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Busy Bee' });
    const sessions = ['agent:main:api:direct:one', 'agent:main:api:direct:two', 'agent:main:api:direct:three'];
    const turns: string[] = [];
    for (const [i, session] of sessions.entries()) turns.push((await user.send(`hold slot ${i}`, session)).turn_id);
    await waitFor(() => held.isHeld('hold slot 0') && held.isHeld('hold slot 1'), 'two model calls');
    // The third turn's lane job has run and found no free slot.
    await waitFor(async () => (await turnsQueue.getJobState(`lane.${turns[2]}`)) === 'completed', 'the third lane job');
    expect((await user.get(`/v1/turns/${turns[2]}`)).body.status).toBe('queued');
    expect(held.isHeld('hold slot 2')).toBe(false);

    held.release('hold slot 0');
    await waitFor(() => held.isHeld('hold slot 2'), 'the third model call once a slot is free');
    held.release('hold slot 1');
    held.release('hold slot 2');
    for (const turn of turns) expect((await user.events(turn)).at(-1)?.data).toMatchObject({ status: 'completed' });
  });
});

describe('a turn waiting for an approval', () => {
  it("holds no slot: parking it starts the user's next waiting turn", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Manual Mo' });
    const first = (await user.send('hold park 0', 'agent:main:api:direct:p0')).turn_id;
    await user.send('hold park 1', 'agent:main:api:direct:p1');
    await waitFor(() => held.isHeld('hold park 0') && held.isHeld('hold park 1'), 'two model calls');
    const third = (await user.send('hold park 2', 'agent:main:api:direct:p2')).turn_id;
    await waitFor(async () => (await turnsQueue.getJobState(`lane.${third}`)) === 'completed', 'the third lane job');
    expect(held.isHeld('hold park 2')).toBe(false);

    // Manual mode: the first turn now waits for an approval, which holds nothing.
    held.release('hold park 0', { toolCalls: [{ name: 'create_folder', arguments: { name: 'Parked' } }] });
    await user.events(first, { until: (e) => e.event === 'tool_approval_request' });
    await waitFor(() => held.isHeld('hold park 2'), 'the third model call once the first turn parks');
    held.release('hold park 1');
    held.release('hold park 2');
    expect((await user.events(third)).at(-1)?.data).toMatchObject({ status: 'completed' });
    expect((await user.post(`/v1/turns/${first}/cancel`)).status).toBe(202);
  });

  it('approved while the user has no free slot, waits queued and goes on once one frees', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Patient Pat' });
    const parkedSession = 'agent:main:api:direct:r0';
    const first = (await user.send('hold resume 0', parkedSession)).turn_id;
    await waitFor(() => held.isHeld('hold resume 0'), 'the first model call');
    held.release('hold resume 0', { toolCalls: [{ name: 'create_folder', arguments: { name: 'Resumed' } }] });
    const waiting = await user.events(first, { until: (e) => e.event === 'tool_approval_request' });
    const approvalId = String(waiting.at(-1)?.data.approval_id);
    // Both of the user's slots taken by turns of other sessions.
    await user.send('hold resume 1', 'agent:main:api:direct:r1');
    await user.send('hold resume 2', 'agent:main:api:direct:r2');
    await waitFor(() => held.isHeld('hold resume 1') && held.isHeld('hold resume 2'), 'two model calls');

    expect((await user.post(`/v1/approvals/${approvalId}`, { decision: 'approve' })).status).toBe(200);
    expect((await user.get(`/v1/turns/${first}`)).body.status).toBe('queued');
    // A message merged meanwhile does not join the approved turn, which read its messages long ago.
    const merged = await user.post('/v1/messages', { text: 'hold resume 3', session_key: parkedSession, if_busy: 'merge' });
    expect(merged.body.turn_id).not.toBe(first);

    held.release('hold resume 1');
    // The freed slot goes to the approved turn: its tool runs and it calls the model again.
    await waitFor(() => held.isHeld('hold resume 0'), 'the approved turn going on');
    expect((await user.get(`/v1/turns/${first}`)).body.status).toBe('running');
    held.release('hold resume 0');
    held.release('hold resume 2');
    const events = await user.events(first);
    expect(events.filter((e) => e.event === 'turn_started')).toHaveLength(1);
    expect(events.map((e) => e.event)).toEqual(expect.arrayContaining(['tool_approved', 'tool_complete']));
    expect(events.at(-1)?.data).toMatchObject({ status: 'completed' });
    await waitFor(() => held.isHeld('hold resume 3'), 'the merged message as a turn of its own');
    held.release('hold resume 3');
    expect((await user.events(merged.body.turn_id as string)).at(-1)?.data).toMatchObject({ status: 'completed' });
    const messages = (await user.get(`/v1/sessions/${parkedSession}/messages`)).body as { role: string; content: string }[];
    expect(messages.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hold resume 0', 'hold resume 3']);
  });
});

describe('relevant documents', () => {
  it('are never put in the prompt of a group session', async () => {
    const member = newChat();
    await sendTelegram(member, 'hi there');
    await waitFor(() => telegram.received(member).length === 1, 'the first answer');
    const userId = (await identityUser(member)) as string;
    await db.query(
      `INSERT INTO documents (id, user_id, title, title_key, content) VALUES (gen_random_uuid(), $1, 'Launch plan', 'launch plan', $2)`,
      [userId, 'The launch code is amber falcon.'],
    );
    const group = -newChat();
    nextUpdate += 1;
    const update = telegramGroupText(group, member, 'what is the launch code?', nextUpdate, `@${telegram.bot.username}`);
    expect((await webhooks.postTelegram(update)).status).toBe(200);
    await waitFor(() => telegram.received(group).length === 1, 'the group answer');
    await sendTelegram(member, 'what is the launch code?');
    await waitFor(() => telegram.received(member).length === 2, 'the private answer');

    const prompts = model.requests.filter((r) => userText(r.body).includes('what is the launch code?')).map((r) => r.raw);
    expect(prompts).toHaveLength(2);
    expect(prompts[0]).not.toContain('amber falcon');
    expect(prompts[1]).toContain('amber falcon');
  });
});
