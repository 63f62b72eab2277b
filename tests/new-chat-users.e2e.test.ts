import type pg from 'pg';
import { FakeModel } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeTelegram } from './helpers/fake-telegram';

/**
 * Chat users are admitted at most NEW_CHAT_USERS_PER_MINUTE a minute (docs/channels.md#identities-and-linking):
 * a flood of new accounts, each with its own message rate and token budget, waits for its places.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const system = new TestSystem();
let db: pg.Pool;

const PER_MINUTE = 2;
const webhooks = new ChannelWebhooks(() => system.url, 'tg-new-users-secret', 'wa-new-users-secret');

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start()]);
  model.script = () => ({ content: 'ok' });
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: '123456:test-token',
      TELEGRAM_WEBHOOK_SECRET: webhooks.telegramSecret,
      TELEGRAM_API_BASE_URL: telegram.url,
      NEW_CHAT_USERS_PER_MINUTE: String(PER_MINUTE),
    },
  });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), telegram.stop()]);
  await db.end();
});

/** The turn a Telegram update made, and how long from now it may start (null: it may start now). */
async function send(chat: number, text: string): Promise<{ id: string; status: string; waitsS: number | null }> {
  const update = webhooks.tgText(chat, text);
  expect((await webhooks.postTelegram(update)).status).toBe(200);
  const turn = await db.query<{ id: string; status: string; waits_s: number | null }>(
    `SELECT t.id, t.status, CASE WHEN t.start_after > NOW() THEN EXTRACT(EPOCH FROM t.start_after - NOW())::float8 END AS waits_s
     FROM turns t JOIN channel_messages m ON m.turn_id = t.id WHERE m.channel = 'telegram' AND m.external_id = $1`,
    [String(update.update_id)],
  );
  const row = turn.rows[0];
  if (!row) throw new Error(`no turn for update ${update.update_id}`);
  return { id: row.id, status: row.status, waitsS: row.waits_s };
}

describe('new chat users past NEW_CHAT_USERS_PER_MINUTE', () => {
  it('are created with their message stored, their turns waiting for their place; established users do not wait', async () => {
    const chats = Array.from({ length: PER_MINUTE + 2 }, () => webhooks.nextId());
    const first = [];
    for (const chat of chats) first.push(await send(chat, `hello from ${chat}`));

    // A burst of PER_MINUTE is admitted at once; the next wait 60 / PER_MINUTE seconds each, in turn.
    expect(first.slice(0, PER_MINUTE).map((turn) => turn.waitsS)).toEqual([null, null]);
    const [third = 0, fourth = 0] = first.slice(PER_MINUTE).map((turn) => turn.waitsS ?? 0);
    expect(third).toBeGreaterThan(0);
    expect(fourth).toBeGreaterThan(third + 20);
    for (const turn of first.slice(PER_MINUTE)) expect(turn.status).toBe('queued');

    // The admitted ones are established users: their next message waits for nothing.
    await system.waitFor(() => telegram.received(chats[0] as number).length > 0, 'the first answer');
    const again = await send(chats[0] as number, 'and again');
    expect(again.waitsS).toBeNull();
    // A held user's later message waits for its place too, the turn holding its first.
    expect((await send(chats[PER_MINUTE] as number, 'still there?')).id).toBe(first[PER_MINUTE]?.id);
  });
});
