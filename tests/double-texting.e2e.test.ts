import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { injectFault, testDb } from './helpers/db';
import { afterTools, FakeModel, userMessagesWithImages, userText } from '../scripts/lib/fake-model';
import { fixture, telegramPhoto } from './helpers/channel-fixtures';
import { FakeTelegram } from './helpers/fake-telegram';
import { HeldReplies, trailingUserTexts } from './helpers/held-model';
import { TestSystem } from '../scripts/lib/system';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { inForumTopic, telegramGroupText } from './helpers/telegram-updates';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * A message for a busy session follows `if_busy` (docs/agent.md#busy-sessions): queue, merge, reject, interrupt;
 * chats merge by default, so "hi", "can you", "add milk" get one answer that read all three.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const system = new TestSystem();
const held = new HeldReplies();
const TG_SECRET = 'tg-double-texting-secret';
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, 'no-whatsapp-here');
let db: pg.Pool;
let api: Api;
let removeFaults: () => Promise<void>;

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start()]);
  model.script = (body) => {
    const text = userText(body);
    if (text.startsWith('hold ') && !afterTools(body)) return held.hold(text);
    if (text === 'two sluggish folders') {
      return afterTools(body)
        ? { content: 'made them' }
        : {
            toolCalls: [
              { name: 'create_folder', arguments: { name: 'Sluggish One' } },
              { name: 'create_folder', arguments: { name: 'Sluggish Two' } },
            ],
          };
    }
    return { content: `echo: ${trailingUserTexts(body).join(' | ')}` };
  };
  db = testDb();
  // A folder named "Sluggish…" takes a second to create: long enough to interrupt its turn mid-tool.
  removeFaults = await injectFault(db, 'test_sluggish', 'folders', `IF NEW.name LIKE 'Sluggish%' THEN PERFORM pg_sleep(1); END IF;`);
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TELEGRAM_BOT_TOKEN: '123456:double-texting',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
      TELEGRAM_BOT_USERNAME: telegram.bot.username,
      VISION: 'true',
    },
  });
  api = new Api(system.url);
});

afterAll(async () => {
  held.releaseAll();
  await system.stop();
  await Promise.all([model.stop(), telegram.stop()]);
  await removeFaults();
  await db.end();
});

const status = async (user: Api, turnId: string) => (await user.get(`/v1/turns/${turnId}`)).body.status as string;
const doneOf = async (user: Api, turnId: string) => (await user.events(turnId)).at(-1)?.data;
const post = (user: Api, text: string, ifBusy?: string, sessionKey?: string) =>
  user.post('/v1/messages', { text, ...(ifBusy ? { if_busy: ifBusy } : {}), ...(sessionKey ? { session_key: sessionKey } : {}) });

describe('if_busy on POST /v1/messages', () => {
  it('reject answers 409 session_busy while a turn runs; queue, the default, waits its turn', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Rita' });
    const first = await user.send('hold reject');
    await waitFor(() => held.isHeld('hold reject'), 'the first model call');

    const rejected = await post(user, 'not now', 'reject');
    expect(rejected.status).toBe(409);
    expect(rejected.body.error.code).toBe('session_busy');
    expect((await post(user, 'later', 'sometimes')).status).toBe(400);

    const queued = await post(user, 'after you');
    expect(queued.status).toBe(202);
    expect(queued.body.turn_id).not.toBe(first.turn_id);
    expect(await status(user, queued.body.turn_id)).toBe('queued');

    held.release('hold reject');
    expect(await doneOf(user, first.turn_id)).toMatchObject({ status: 'completed' });
    expect(await doneOf(user, queued.body.turn_id)).toMatchObject({ status: 'completed' });
    // An idle session takes a rejecting message like any other.
    expect((await post(user, 'idle now', 'reject')).status).toBe(202);
  });

  it('merge joins the queued turn, answers its id, and that turn reads every merged message', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Mario' });
    const running = await user.send('hold merge');
    await waitFor(() => held.isHeld('hold merge'), 'the first model call');

    const queued = (await post(user, 'first')).body.turn_id as string;
    const second = await post(user, 'second', 'merge');
    const third = await post(user, 'third', 'merge');
    expect([second.status, third.status]).toEqual([202, 202]);
    expect([second.body.turn_id, third.body.turn_id]).toEqual([queued, queued]);

    held.release('hold merge');
    const events = await user.events(queued);
    expect(events.find((e) => e.event === 'message')?.data.content).toBe('echo: first | second | third');
    expect(await doneOf(user, running.turn_id)).toMatchObject({ status: 'completed' });
    const turns = await db.query('SELECT 1 FROM turns WHERE user_id = $1', [user.userId]);
    expect(turns.rowCount).toBe(2);
    const stored = await user.get(`/v1/sessions/agent:main:main/messages`);
    const userMessages = (stored.body as { role: string; content: string }[]).filter((m) => m.role === 'user').map((m) => m.content);
    expect(userMessages).toEqual(['hold merge', 'first', 'second', 'third']);

    // Nothing queued: a merging message gets a turn of its own.
    const alone = await post(user, 'alone', 'merge');
    expect(alone.body.turn_id).not.toBe(queued);
    expect(await doneOf(user, alone.body.turn_id)).toMatchObject({ status: 'completed' });
  });

  it('loses no message merged while turns start: each text is read by exactly one turn', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Racer' });
    const session = 'agent:main:api:direct:race';
    const texts = Array.from({ length: 12 }, (_, i) => `burst ${i}`);
    const answers = await Promise.all(texts.map((text) => post(user, text, 'merge', session)));
    expect(answers.map((a) => a.status)).toEqual(texts.map(() => 202));
    const turnIds = [...new Set(answers.map((a) => a.body.turn_id as string))];
    for (const turnId of turnIds) expect(await doneOf(user, turnId)).toMatchObject({ status: 'completed' });
    const stored = await db.query<{ content: string }>(
      `SELECT m.content FROM messages m JOIN turns t ON t.id = m.turn_id WHERE t.user_id = $1 AND m.role = 'user'`,
      [user.userId],
    );
    expect(stored.rows.map((m) => m.content).sort()).toEqual([...texts].sort());
  });

  it('interrupt cancels the turn waiting for the model and starts the new one at once', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Ines' });
    const old = await user.send('hold interrupt');
    await waitFor(() => held.isHeld('hold interrupt'), 'the first model call');

    const interrupting = await post(user, 'change of plan', 'interrupt');
    expect(interrupting.status).toBe(202);
    expect(await doneOf(user, old.turn_id)).toMatchObject({ status: 'cancelled' });
    // Answered while the old turn's model call is still held: it did not wait behind it. The
    // interrupted message stays in the conversation, unanswered, before the new one.
    const events = await user.events(interrupting.body.turn_id);
    expect(events.find((e) => e.event === 'message')?.data.content).toBe('echo: hold interrupt | change of plan');
    expect(held.isHeld('hold interrupt')).toBe(true);
    held.release('hold interrupt');
  });

  it('interrupt cancels the queued turns too, and the new turn reads their messages', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Quinn' });
    const running = await user.send('hold before queued');
    await waitFor(() => held.isHeld('hold before queued'), 'the first model call');
    const queued = await post(user, 'and this too');
    const interrupting = await post(user, 'never mind', 'interrupt');
    expect(await doneOf(user, queued.body.turn_id)).toMatchObject({ status: 'cancelled' });
    const events = await user.events(interrupting.body.turn_id);
    expect(events.find((e) => e.event === 'message')?.data.content).toBe('echo: hold before queued | and this too | never mind');
    held.release('hold before queued');
    expect(await doneOf(user, running.turn_id)).toMatchObject({ status: 'cancelled' });
    const stored = (await user.get('/v1/sessions/agent:main:main/messages')).body as { role: string; content: string }[];
    expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hold before queued', 'and this too', 'never mind']);
  });

  it('a queued message cancelled on its own is withdrawn: the turn running ahead never reads it', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Wanda' });
    const running = await user.send('hold then list');
    await waitFor(() => held.isHeld('hold then list'), 'the first model call');
    const queued = await post(user, 'delete everything');
    expect((await user.post(`/v1/turns/${queued.body.turn_id}/cancel`)).status).toBe(202);
    expect(await doneOf(user, queued.body.turn_id)).toMatchObject({ status: 'cancelled' });
    // The running turn takes a second step after the cancel: its request is read after it.
    held.release('hold then list', { toolCalls: [{ name: 'list_habits', arguments: {} }] });
    expect(await doneOf(user, running.turn_id)).toMatchObject({ status: 'completed' });
    const requests = model.requests.filter((request) => request.raw.includes('hold then list'));
    expect(requests).toHaveLength(2);
    expect(requests.some((request) => request.raw.includes('delete everything'))).toBe(false);
    const stored = (await user.get('/v1/sessions/agent:main:main/messages')).body as { role: string; content: string }[];
    expect(stored.filter((m) => m.role === 'user').map((m) => m.content)).toEqual(['hold then list']);
  });

  it('interrupt lets a started tool finish and skips the pending ones', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Iris', preferences: { autonomous_mode: true } });
    const old = await user.send('two sluggish folders');
    await user.events(old.turn_id, { until: (e) => e.event === 'tool_start' });

    const interrupting = await post(user, 'stop that', 'interrupt');
    expect(await doneOf(user, old.turn_id)).toMatchObject({ status: 'cancelled' });
    expect(await doneOf(user, interrupting.body.turn_id)).toMatchObject({ status: 'completed' });
    const tasks = async () =>
      (await db.query<{ status: string }>('SELECT status FROM tasks WHERE turn_id = $1 ORDER BY position', [old.turn_id])).rows.map(
        (t) => t.status,
      );
    expect(await tasks()).toEqual(['completed', 'skipped']);
    // The old turn's stream settles every task before it closes: the pending one skipped at once,
    // the started one completed when it ends, and only then `done`.
    const events = await user.events(old.turn_id);
    const [first, second] = (events.find((e) => e.event === 'task_list')?.data.tasks as { id: string }[]).map((t) => t.id);
    const updates = events.filter((e) => e.event === 'task_update').map((e) => [e.data.task_id, e.data.status]);
    expect(updates).toEqual([
      [first, 'in_progress'],
      [second, 'skipped'],
      [first, 'completed'],
    ]);
    expect(events.filter((e) => e.event === 'tool_complete').map((e) => e.data.task_id)).toEqual([first]);
    expect(events.at(-1)).toMatchObject({ event: 'done', data: { status: 'cancelled' } });
    const folders = await db.query<{ name: string }>('SELECT name FROM folders WHERE user_id = $1', [user.userId]);
    expect(folders.rows.map((f) => f.name)).toEqual(['Sluggish One']);
  });
});

describe('chats merge by default', () => {
  let update = 7_300_000_000 + Math.floor(Math.random() * 1_000_000) * 100;
  const newChat = () => 7_100_000 + Math.floor(Math.random() * 1_000_000);
  const send = async (chat: number, text: string) => {
    update += 1;
    const res = await webhooks.postTelegram(webhooks.tgText(chat, text, update));
    expect(res.status).toBe(200);
    return update;
  };

  it('answers "hi", "can you", "add milk" sent while busy once, having read all three', async () => {
    const chat = newChat();
    await send(chat, 'hold chat');
    await waitFor(() => held.isHeld('hold chat'), 'the first model call');
    const ids = [await send(chat, 'hi'), await send(chat, 'can you'), await send(chat, 'add milk')];

    const turns = await db.query<{ turn_id: string }>(
      `SELECT DISTINCT turn_id FROM channel_messages WHERE channel = 'telegram' AND external_id = ANY($1)`,
      [ids.map(String)],
    );
    expect(turns.rowCount).toBe(1);
    held.release('hold chat');
    await waitFor(() => telegram.received(chat).length === 2, 'two answers');
    expect(telegram.received(chat).map((call) => call.body.text)).toEqual(['released hold chat', 'echo: hi | can you | add milk']);
  });

  it('merges a photo like a text: the queued turn sees it on its own message, and a redelivery adds nothing', async () => {
    const chat = newChat();
    telegram.addFile(`photo-${chat}`, `photos/${chat}.jpg`, 'MERGED-JPEG');
    const photo = fixture(telegramPhoto);
    update += 1;
    photo.update_id = update;
    Object.assign(photo.message, {
      from: { ...photo.message.from, id: chat },
      chat: { ...photo.message.chat, id: chat },
      photo: [{ file_id: `photo-${chat}`, file_unique_id: `u${chat}`, file_size: 11, width: 800, height: 600 }],
      caption: 'my receipt',
    });
    await send(chat, 'hold photo');
    await waitFor(() => held.isHeld('hold photo'), 'the first model call');
    const first = await send(chat, 'look at this');
    for (const delivery of [photo, photo]) expect((await webhooks.postTelegram(delivery)).status).toBe(200);
    const last = await send(chat, 'what is the total?');

    const turns = await db.query<{ turn_id: string }>(
      `SELECT DISTINCT turn_id FROM channel_messages WHERE channel = 'telegram' AND external_id = ANY($1)`,
      [[first, photo.update_id, last].map(String)],
    );
    expect(turns.rowCount).toBe(1);
    held.release('hold photo');
    await waitFor(() => telegram.received(chat).length === 2, 'two answers');
    expect(telegram.received(chat).map((call) => call.body.text)).toEqual([
      'released hold photo',
      'echo: look at this | [photo] my receipt | what is the total?',
    ]);
    const request = model.requests.find((r) => r.raw.includes('what is the total?'));
    const jpeg = `data:image/jpeg;base64,${Buffer.from('MERGED-JPEG').toString('base64')}`;
    expect(request && userMessagesWithImages(request.body)).toEqual([['[photo] my receipt', [jpeg]]]);
  });

  it('merges a message in a forum topic only into a turn that answers the same topic', async () => {
    const group = -newChat();
    const member = newChat();
    const inTopic = async (text: string, topic: number) => {
      update += 1;
      const message = inForumTopic(telegramGroupText(group, member, text, update, `@${telegram.bot.username}`), topic);
      expect((await webhooks.postTelegram(message)).status).toBe(200);
    };
    await inTopic('hold topic', 5);
    await waitFor(() => held.isHeld('hold topic'), 'the first model call');
    await inTopic('first', 5);
    await inTopic('second', 5);
    await inTopic('elsewhere', 6);
    held.release('hold topic');
    await waitFor(() => telegram.received(group).length === 3, 'three answers');
    expect(telegram.received(group).map((call) => [call.body.message_thread_id, call.body.text])).toEqual([
      [5, 'released hold topic'],
      [5, 'echo: first | second'],
      [6, 'echo: elsewhere'],
    ]);
  });

  it('merges a chat message only into a turn that answers the same chat', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Two Ways' });
    const chat = newChat();
    await send(chat, `/link ${(await user.post('/v1/link-codes')).body.code}`);
    await waitFor(() => telegram.received(chat).length === 1, 'the link confirmation');
    await user.send('hold origin');
    await waitFor(() => held.isHeld('hold origin'), 'the first model call');
    const queued = (await post(user, 'queued over http')).body.turn_id as string;

    const fromChat = await send(chat, 'from the chat');
    const row = await db.query<{ turn_id: string }>(
      `SELECT turn_id FROM channel_messages WHERE channel = 'telegram' AND external_id = $1`,
      [String(fromChat)],
    );
    expect(row.rows[0]?.turn_id).not.toBe(queued);
    held.release('hold origin');
    await waitFor(() => telegram.received(chat).length === 2, 'the chat answer');
    expect(telegram.received(chat)[1]?.body.text).toBe('echo: from the chat');
  });
});
