import { randomUUID } from 'node:crypto';
import { Queue } from 'bullmq';
import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { FakeModel } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { fixture, whatsappButtonReply } from './helpers/channel-fixtures';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeGraph } from './helpers/fake-graph';
import { FakeTelegram } from './helpers/fake-telegram';

/**
 * Chats that try to abuse the bot (docs/channels.md#limits-on-chats): guessing link codes, and
 * flooding it with messages it answers without a turn. RATE_LIMIT_MESSAGES_PER_MINUTE is small here.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const graph = new FakeGraph();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;
let deliveries: Queue;

const RATE = 3;
const webhooks = new ChannelWebhooks(() => system.url, 'tg-abuse-secret', 'wa-abuse-secret');
const nextId = () => webhooks.nextId();

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start(), graph.start()]);
  model.script = () => ({ content: 'ok' });
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: '123456:test-token',
      TELEGRAM_WEBHOOK_SECRET: webhooks.telegramSecret,
      TELEGRAM_API_BASE_URL: telegram.url,
      RATE_LIMIT_MESSAGES_PER_MINUTE: String(RATE),
      ...graph.settings(webhooks.whatsappAppSecret, 'wa-verify'),
    },
  });
  api = new Api(system.url);
  deliveries = new Queue('deliveries', { connection: { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' }, prefix: system.prefix });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await deliveries.close();
  await system.stop();
  await Promise.all([model.stop(), telegram.stop(), graph.stop()]);
  await db.end();
});

/** What the gateway decided to reply to a Telegram update, read from its channel_messages row (null: nothing). */
const replyTo = async (update: { update_id: number }) =>
  (
    await db.query<{ reply: string | null }>(`SELECT reply FROM channel_messages WHERE channel = 'telegram' AND external_id = $1`, [
      String(update.update_id),
    ])
  ).rows[0]?.reply;
const identityUser = async (channel: string, externalId: string) =>
  (
    await db.query<{ user_id: string }>('SELECT user_id FROM channel_identities WHERE channel = $1 AND external_id = $2', [
      channel,
      externalId,
    ])
  ).rows[0]?.user_id;

async function sendTelegram(update: { update_id: number }): Promise<string | null | undefined> {
  expect((await webhooks.postTelegram(update)).status).toBe(200);
  return replyTo(update);
}

describe('/link CODE guesses', () => {
  it('stops checking codes from a chat after 5 wrong ones in 10 minutes, saying so once; other chats still link', async () => {
    const user = await api.createUser(system.adminToken, { name: 'link owner' });
    const { code } = (await user.post('/v1/link-codes')).body as { code: string };
    const guesser = nextId();
    for (let guess = 0; guess < 5; guess += 1) {
      expect(await sendTelegram(webhooks.tgText(guesser, `/link WRONG${guess}XX`))).toContain('not valid');
    }
    // The right code, too late: this chat's guesses are used up, so it is not even looked at.
    expect(await sendTelegram(webhooks.tgText(guesser, `/link ${code}`))).toContain('Too many');
    expect(await sendTelegram(webhooks.tgText(guesser, `/link ${code}`))).toBeNull();
    expect(await identityUser('telegram', String(guesser))).toBeUndefined();
    await system.waitFor(() => telegram.received(guesser).length === 6, 'the five refusals and the one notice');

    const owner = nextId();
    expect(await sendTelegram(webhooks.tgText(owner, `/link ${code}`))).toContain('Linked');
    expect(await identityUser('telegram', String(owner))).toBe(user.userId);
  });
});

describe('replies without a turn', () => {
  /** A sticker from `chat`, which the bot cannot read and answers with a short reply. */
  const sticker = (chat: number) => {
    const update = webhooks.tgText(chat, '');
    const { text: _text, ...message } = update.message;
    return { ...update, message: { ...message, sticker: { file_id: `sticker-${nextId()}`, emoji: '🙂' } } };
  };

  it('count against the message rate: a flood of stickers gets RATE replies, and a text after it still gets its turn', async () => {
    const chat = nextId();
    const replies = [];
    for (let i = 0; i < RATE + 2; i += 1) replies.push(await sendTelegram(sticker(chat)));
    expect(replies.slice(0, RATE)).toEqual(Array.from({ length: RATE }, () => expect.stringContaining('I can only read')));
    expect(replies.slice(RATE)).toEqual([null, null]);
    await system.waitFor(() => telegram.received(chat).length === RATE, 'the replies within the rate');

    const text = webhooks.tgText(chat, 'a real question');
    expect(await sendTelegram(text)).toBeNull();
    const turn = await db.query<{ status: string }>(
      `SELECT t.status FROM turns t JOIN channel_messages m ON m.turn_id = t.id WHERE m.channel = 'telegram' AND m.external_id = $1`,
      [String(text.update_id)],
    );
    expect(turn.rows).toEqual([{ status: 'queued' }]);
  });
});

describe('WhatsApp button presses that change nothing', () => {
  /** A press of a button for an approval that does not exist, as `from` would send it. */
  const bogusPress = (from: string) => {
    const payload = fixture(whatsappButtonReply);
    const value = payload.entry[0]?.changes[0]?.value;
    const [contact, message] = [value?.contacts[0], value?.messages[0]];
    if (!contact || !message) throw new Error('the button reply fixture has no message');
    const id = `wamid.${randomUUID()}`;
    Object.assign(contact, { wa_id: from });
    Object.assign(message, { from, id });
    message.interactive.button_reply.id = `a:${randomUUID()}:y`;
    return { raw: JSON.stringify(payload), id };
  };
  /** Whether the gateway queued words answering the press `id` (the job exists once the webhook has answered). */
  const answered = async (id: string) => {
    const row = await db.query<{ id: string }>(`SELECT id FROM channel_messages WHERE channel = 'whatsapp' AND external_id = $1`, [id]);
    return (await deliveries.getJob(`refused.${row.rows[0]?.id}`)) !== undefined;
  };

  it('get words only within the message rate', async () => {
    const waId = `55119${nextId()}`;
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'hello'))).status).toBe(200);
    const outcomes = [];
    for (let i = 0; i < RATE + 1; i += 1) {
      const press = bogusPress(waId);
      expect((await webhooks.postWhatsApp(press.raw)).status).toBe(200);
      outcomes.push(await answered(press.id));
    }
    // The text took one of the minute's RATE messages.
    expect(outcomes).toEqual([...Array.from({ length: RATE - 1 }, () => true), false, false]);
  });
});
