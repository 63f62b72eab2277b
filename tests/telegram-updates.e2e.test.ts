import { randomUUID } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import type pg from 'pg';
import { fixture, telegramPhoto } from './helpers/channel-fixtures';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { FakeTelegram } from './helpers/fake-telegram';
import { telegramGroupText } from './helpers/telegram-updates';
import { TestSystem } from '../scripts/lib/system';

/** Telegram updates in the shapes a real bot receives beyond a single message (docs/channels.md#message-content). */
const model = new FakeModel();
const telegram = new FakeTelegram();
const system = new TestSystem();
const TG_SECRET = 'tg-updates-secret';
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, 'unused');
let db: pg.Pool;
/** What Telegram answers a bot's first message to someone who never opened a chat with it. */
const CANNOT_INITIATE = { ok: false, error_code: 403, description: "Forbidden: bot can't initiate conversation with a user" };

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start()]);
  model.script = (body) => {
    const folder = /^make folder (.+)$/.exec(userText(body))?.[1];
    if (!folder) return { content: `echo: ${userText(body)}` };
    return afterTools(body) ? { content: `Created ${folder}.` } : { toolCalls: [{ name: 'create_folder', arguments: { name: folder } }] };
  };
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: '123456:test-token',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
    },
  });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), telegram.stop()]);
  await db.end();
});

/** One item of album `album` sent by `chat`, as Telegram delivers it: an update of its own. */
function albumPhoto(chat: number, album: string) {
  const photo = fixture(telegramPhoto);
  photo.update_id = webhooks.nextId();
  Object.assign(photo.message, {
    message_id: webhooks.nextId(),
    from: { ...photo.message.from, id: chat },
    chat: { ...photo.message.chat, id: chat },
    media_group_id: album,
  });
  return photo;
}

describe('Telegram updates', () => {
  it('answers an album the system cannot read with one reply, not one per item', async () => {
    const chat = webhooks.nextId();
    const items = [albumPhoto(chat, 'album-1'), albumPhoto(chat, 'album-1'), albumPhoto(chat, 'album-1')];
    for (const item of items) expect((await webhooks.postTelegram(item)).status).toBe(200);
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'after the album'))).status).toBe(200);
    // A chat's messages go out in the order they were queued: the echo comes after every reply to the album.
    await system.waitFor(() => telegram.received(chat).some((call) => call.body.text === 'echo: after the album'), 'the echo');
    expect(telegram.received(chat).map((call) => call.body.text)).toEqual([
      expect.stringContaining('I can only read text messages'),
      'echo: after the album',
    ]);
  });

  it('takes a plain "yes" in a group for a message there, not for the approval waiting in the direct chat', async () => {
    const member = webhooks.nextId();
    const group = -webhooks.nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(member, 'make folder Taxes'))).status).toBe(200);
    await system.waitFor(() => telegram.received(member)[0]?.body.reply_markup, 'the approval request');

    const inGroup = telegramGroupText(group, member, 'yes', webhooks.nextId(), `@${telegram.bot.username}`);
    expect((await webhooks.postTelegram(inGroup)).status).toBe(200);
    await system.waitFor(() => telegram.received(group).length === 1, 'the group answer');
    expect(telegram.received(group)[0]?.body.text).toBe('echo: yes');
    const pending = await db.query(
      `SELECT a.id FROM approvals a JOIN channel_identities i ON i.user_id = a.user_id
       WHERE i.channel = 'telegram' AND i.external_id = $1 AND a.status = 'pending'`,
      [String(member)],
    );
    expect(pending.rowCount).toBe(1);

    // In the direct chat, where it was asked, the same word decides it.
    expect((await webhooks.postTelegram(webhooks.tgText(member, 'yes'))).status).toBe(200);
    await system.waitFor(() => telegram.received(member).some((call) => call.body.text === 'Created Taxes.'), 'the result');
  });

  it('decides the approval a plain "yes" answers in the chat it was asked in after dm_scope changed', async () => {
    const chat = webhooks.nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'make folder Receipts'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat)[0]?.body.reply_markup, 'the approval request');
    // The question waits in the main session; from now on this chat's messages go to a session of its own.
    await db.query(
      `UPDATE user_preferences SET settings = settings || '{"dm_scope": "per-channel"}'
       WHERE user_id = (SELECT user_id FROM channel_identities WHERE channel = 'telegram' AND external_id = $1)`,
      [String(chat)],
    );

    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'yes'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).some((call) => call.body.text === 'Created Receipts.'), 'the result');
    expect(telegram.received(chat).map((call) => call.body.text)).not.toContain('echo: yes');
  });

  it('finds a group mention that follows a control character, which is removed before the mention is looked for', async () => {
    const group = -webhooks.nextId();
    const update = telegramGroupText(group, webhooks.nextId(), 'hello', webhooks.nextId());
    const mention = `@${telegram.bot.username}`;
    // Telegram counts entity offsets in UTF-16 units of the text as sent, the bell included.
    Object.assign(update.message, { text: `\u0007${mention} hello`, entities: [{ offset: 1, length: mention.length, type: 'mention' }] });
    expect((await webhooks.postTelegram(update)).status).toBe(200);
    await system.waitFor(() => telegram.received(group)[0], 'the group answer');
    expect(telegram.received(group)[0]?.body.text).toBe('echo: hello');
  });

  it('sends a reminder of a member known only from a group to their private chat, never the group, and logs what Telegram refuses', async () => {
    const [member, group] = [webhooks.nextId(), -webhooks.nextId()];
    const inGroup = telegramGroupText(group, member, 'hello', webhooks.nextId(), `@${telegram.bot.username}`);
    expect((await webhooks.postTelegram(inGroup)).status).toBe(200);
    await system.waitFor(() => telegram.received(group)[0], 'the group answer');
    const { rows } = await db.query<{ user_id: string }>(
      `SELECT user_id FROM channel_identities WHERE channel = 'telegram' AND external_id = $1`,
      [String(member)],
    );
    telegram.failSend(member, 403, CANNOT_INITIATE);

    const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const queue = new Queue('deliveries', { connection, prefix: system.prefix });
    const events = new QueueEvents('deliveries', { connection, prefix: system.prefix });
    try {
      await events.waitUntilReady();
      const job = await queue.add('notify', { userId: rows[0]?.user_id, text: 'Secret pill 42' }, { jobId: `notify.${randomUUID()}` });
      await job.waitUntilFinished(events, 20_000);
      const resend = await Job.fromId(queue, `resend-notice.${job.id}`);
      await resend?.waitUntilFinished(events, 20_000);
      const warning = await system.waitFor(() => system.logs.find((line) => line.includes(`resend-notice.${job.id}`)), 'the warning');
      expect(warning).toContain('never opened a private chat');
    } finally {
      await events.close();
      await queue.close();
    }
    expect(system.logs.join('')).not.toContain('Secret pill 42');
    expect(telegram.sendAttempts(member)).toHaveLength(1);
    expect(telegram.sendAttempts(group).map((call) => call.body.text)).toEqual(['echo: hello']);
  });

  // Last: it swaps the gateway for one of another bot.
  it("reads a new bot's update whose update_id the previous bot's updates already used", async () => {
    const [before, after, updateId] = [webhooks.nextId(), webhooks.nextId(), webhooks.nextId()];
    expect((await webhooks.postTelegram(webhooks.tgText(before, 'old bot', updateId))).status).toBe(200);
    await system.waitFor(() => telegram.received(before)[0], 'the old bot answer');

    // A new token is a new bot, whose update ids count on their own.
    await system.signal('gateway', 'SIGTERM');
    system.spawn('gateway', { TELEGRAM_BOT_TOKEN: '654321:another-bot' });
    await system.waitReady();
    expect((await webhooks.postTelegram(webhooks.tgText(after, 'new bot', updateId))).status).toBe(200);
    await system.waitFor(() => telegram.received(after)[0], 'the new bot answer');
    expect(telegram.received(after)[0]?.body.text).toBe('echo: new bot');
  });
});
