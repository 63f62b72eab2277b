import { randomUUID } from 'node:crypto';
import { Queue, QueueEvents } from 'bullmq';
import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { afterTools, FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { ChannelWebhooks, type WhatsAppSender } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeGraph } from './helpers/fake-graph';

/**
 * WhatsApp users who hide their number (known by their business-scoped user id, BSUID) and users
 * who change it, through the real processes (docs/channels.md#whatsapp-usernames-and-changed-numbers).
 */
const model = new FakeModel();
const graph = new FakeGraph();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;

const WA_APP_SECRET = 'wa-app-secret';

beforeAll(async () => {
  await Promise.all([model.start(), graph.start()]);
  model.script = (body) => {
    const text = userText(body);
    const folder = /^make folder (.+)$/.exec(text)?.[1];
    if (folder)
      return afterTools(body) ? { content: `Created ${folder}.` } : { toolCalls: [{ name: 'create_folder', arguments: { name: folder } }] };
    return { content: `echo: ${text}` };
  };
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      ...graph.settings(WA_APP_SECRET),
    },
  });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), graph.stop()]);
  await db.end();
});

const webhooks = new ChannelWebhooks(() => system.url, 'unused', WA_APP_SECRET);
const phone = () => `55119${webhooks.nextId()}`;
const bsuid = (country = 'BR') => `${country}.${webhooks.nextId()}`;

/** Posts a text from `from` and answers its message id. */
async function say(from: WhatsAppSender, text: string, id = `wamid.${randomUUID()}`): Promise<string> {
  expect((await webhooks.postWhatsApp(webhooks.waMessage(from, { type: 'text', text: { body: text } }, id))).status).toBe(200);
  return id;
}
const bodies = (waId: string) => graph.received(waId).map((request) => request.body.text?.body ?? request.body.interactive?.body.text);
const turnOf = async (messageId: string) =>
  (
    await db.query<{ user_id: string; session_id: string }>(
      `SELECT t.user_id, t.session_id FROM channel_messages m JOIN turns t ON t.id = m.turn_id
       WHERE m.channel = 'whatsapp' AND m.external_id = $1`,
      [messageId],
    )
  ).rows[0];
const identities = async (userId: string) =>
  (
    await db.query<{ external_id: string; bsuid: string | null }>(
      `SELECT external_id, bsuid FROM channel_identities WHERE channel = 'whatsapp' AND user_id = $1`,
      [userId],
    )
  ).rows;
/** Message parts recorded as sent to these addresses (recorded just after the Graph API answers). */
const sentTo = async (...waIds: string[]) =>
  (await db.query<{ n: number }>(`SELECT COUNT(*)::int AS n FROM deliveries WHERE channel = 'whatsapp' AND recipient = ANY($1)`, [waIds]))
    .rows[0]?.n ?? 0;
const timeZoneOf = async (userId: string) =>
  (await db.query<{ timezone: string }>('SELECT timezone FROM user_preferences WHERE user_id = $1', [userId])).rows[0]?.timezone;

describe('a user who hides their number', () => {
  it('is answered at their BSUID (recipient, no to): a user of their own, typing, approval buttons, a notice', async () => {
    const hidden = { bsuid: bsuid() };
    const asked = await say(hidden, 'make folder Sala');
    const question = await system.waitFor(() => graph.received(hidden.bsuid)[0], 'the approval request');
    expect(question.body).toMatchObject({ messaging_product: 'whatsapp', recipient: hidden.bsuid, type: 'interactive' });
    expect(question.body.to).toBeUndefined();
    expect(graph.readReceipts().filter((receipt) => receipt.body.message_id === asked)).toHaveLength(1);

    const [approve] = question.body.interactive.action.buttons as { reply: { id: string } }[];
    const press = { type: 'interactive', interactive: { type: 'button_reply', button_reply: { id: approve?.reply.id, title: 'Approve' } } };
    expect((await webhooks.postWhatsApp(webhooks.waMessage(hidden, press))).status).toBe(200);
    await system.waitFor(() => graph.received(hidden.bsuid).length === 2, 'the result');
    expect(bodies(hidden.bsuid)[1]).toBe('Created Sala.');

    const turn = await turnOf(asked);
    if (!turn) throw new Error('the message made no turn');
    expect(await identities(turn.user_id)).toEqual([{ external_id: hidden.bsuid, bsuid: hidden.bsuid }]);
    // Brazil has several zones: a BSUID's country does not choose among them.
    expect(await timeZoneOf(turn.user_id)).toBe('UTC');

    const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const queue = new Queue('deliveries', { connection, prefix: system.prefix });
    const events = new QueueEvents('deliveries', { connection, prefix: system.prefix });
    try {
      await events.waitUntilReady();
      const job = await queue.add('notify', { userId: turn.user_id, text: 'Drink water' }, { jobId: `notify.${randomUUID()}` });
      await job.waitUntilFinished(events, 20_000);
    } finally {
      await events.close();
      await queue.close();
    }
    expect(graph.received(hidden.bsuid).map((request) => request.body.recipient)).toEqual(Array(3).fill(hidden.bsuid));
    expect(bodies(hidden.bsuid)[2]).toBe('Drink water');
  });

  it("links to an existing user with /link, and gets their BSUID country's zone when it has only one", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Linked' });
    const linked = { bsuid: bsuid() };
    await say(linked, `/link ${(await user.post('/v1/link-codes')).body.code}`);
    await system.waitFor(() => graph.received(linked.bsuid).length === 1, 'the confirmation');
    expect(bodies(linked.bsuid)[0]).toContain('Linked');
    const hello = await say(linked, 'hello');
    await system.waitFor(() => graph.received(linked.bsuid).length === 2, 'the answer');
    expect((await turnOf(hello))?.user_id).toBe(user.userId);

    const inJapan = { bsuid: `JP.ENT.${webhooks.nextId()}` };
    const first = await say(inJapan, 'konnichiwa');
    await system.waitFor(() => graph.received(inJapan.bsuid).length === 1, 'the answer');
    expect(await timeZoneOf((await turnOf(first))?.user_id as string)).toBe('Asia/Tokyo');
  });

  it('is one identity with and without their number: the same session, answered at the number', async () => {
    const full = { phone: phone(), bsuid: bsuid() };
    const first = await say(full, 'with my number');
    await system.waitFor(() => graph.received(full.phone).length === 1, 'the first answer');
    const second = await say({ bsuid: full.bsuid }, 'without it');
    await system.waitFor(() => graph.received(full.phone).length === 2, 'the second answer');
    expect(bodies(full.phone)).toEqual(['echo: with my number', 'echo: without it']);
    expect(graph.received(full.bsuid)).toEqual([]);
    const [before, after] = [await turnOf(first), await turnOf(second)];
    expect(after).toEqual(before);
    expect(await identities(before?.user_id as string)).toEqual([{ external_id: full.phone, bsuid: full.bsuid }]);
  });

  it('keeps their user when their number shows later, answered at the number from then on; erasure finds what was sent', async () => {
    const full = { phone: phone(), bsuid: bsuid() };
    const first = await say({ bsuid: full.bsuid }, 'hidden');
    await system.waitFor(async () => (await sentTo(full.bsuid)) === 1, 'the answer at the BSUID');
    const second = await say(full, 'shown');
    await system.waitFor(() => graph.received(full.phone).length === 1, 'the answer at the number');
    const turn = await turnOf(first);
    expect(await turnOf(second)).toEqual(turn);
    expect(await identities(turn?.user_id as string)).toEqual([{ external_id: full.phone, bsuid: full.bsuid }]);

    await system.waitFor(async () => (await sentTo(full.phone)) === 2, 'both answers recorded under the number');
    const admin = new Api(system.url, system.adminToken);
    expect((await admin.request('DELETE', `/v1/admin/users/${turn?.user_id}`)).status).toBe(202);
    await system.waitFor(async () => (await sentTo(full.phone, full.bsuid)) === 0, 'the deliveries erased');
  });

  it('erases what was sent at their BSUID after their number showed (an answer queued before it)', async () => {
    const full = { phone: phone(), bsuid: bsuid() };
    const first = await say({ bsuid: full.bsuid }, 'hidden');
    await system.waitFor(async () => (await sentTo(full.bsuid)) === 1, 'the answer at the BSUID');
    await say(full, 'shown');
    await system.waitFor(async () => (await sentTo(full.phone)) === 2, 'both answers recorded under the number');
    const turn = await turnOf(first);

    // An answer queued for the BSUID before the number showed goes out after it, recorded under the BSUID.
    const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const queue = new Queue('deliveries', { connection, prefix: system.prefix });
    try {
      await queue.add('reply', { to: { channel: 'whatsapp', wa_id: full.bsuid }, text: 'late' }, { jobId: `reply.${randomUUID()}` });
      await system.waitFor(async () => (await sentTo(full.bsuid)) === 1, 'the late answer recorded under the BSUID');
    } finally {
      await queue.close();
    }
    const admin = new Api(system.url, system.adminToken);
    expect((await admin.request('DELETE', `/v1/admin/users/${turn?.user_id}`)).status).toBe(202);
    await system.waitFor(async () => (await sentTo(full.phone, full.bsuid)) === 0, 'the deliveries erased');
  });
});

describe('a user who changes their number', () => {
  it('keeps their user and session, the notice answered by nothing; a redelivered notice changes nothing', async () => {
    const [old, next] = [
      { phone: phone(), bsuid: bsuid() },
      { phone: phone(), bsuid: bsuid() },
    ];
    const before = await say(old, 'before');
    await system.waitFor(async () => (await sentTo(old.phone)) === 1, 'the answer');
    const changed = webhooks.waNumberChange(old, next);
    expect((await webhooks.postWhatsApp(changed)).status).toBe(200);
    const after = await say(next, 'after');
    await system.waitFor(async () => (await sentTo(next.phone)) === 2, 'the answer at the new number');
    const turn = await turnOf(before);
    expect(await turnOf(after)).toEqual(turn);
    const userId = turn?.user_id as string;
    expect(await identities(userId)).toEqual([{ external_id: next.phone, bsuid: next.bsuid }]);

    // Changed back, then the first notice redelivered: it must not move the number again.
    const back = { phone: old.phone, bsuid: bsuid() };
    expect((await webhooks.postWhatsApp(webhooks.waNumberChange(next, back))).status).toBe(200);
    expect((await webhooks.postWhatsApp(changed)).status).toBe(200);
    const again = await say(back, 'back again');
    await system.waitFor(() => graph.received(old.phone).length === 2, 'the answer at the old number');
    expect(await turnOf(again)).toEqual(turn);
    expect(await identities(userId)).toEqual([{ external_id: back.phone, bsuid: back.bsuid }]);
    expect(bodies(old.phone)).toEqual(['echo: before', 'echo: back again']);
    expect(bodies(next.phone)).toEqual(['echo: after']);
    // What was sent to the user's numbers is recorded under their identity's, where erasure looks.
    await system.waitFor(async () => (await sentTo(back.phone)) === 3, 'the answers recorded under the number');
    expect(await sentTo(next.phone)).toBe(0);
  });

  it('leaves both users as they are when the new number already has its own', async () => {
    const [mine, theirs] = [{ phone: phone() }, { phone: phone() }];
    const [first, second] = [await say(mine, 'mine'), await say(theirs, 'theirs')];
    await system.waitFor(() => graph.received(mine.phone).length === 1 && graph.received(theirs.phone).length === 1, 'the answers');
    expect((await webhooks.postWhatsApp(webhooks.waNumberChange(mine, theirs))).status).toBe(200);
    const [third, fourth] = [await say(mine, 'still mine'), await say(theirs, 'still theirs')];
    await system.waitFor(() => graph.received(mine.phone).length === 2 && graph.received(theirs.phone).length === 2, 'the next answers');
    expect((await turnOf(third))?.user_id).toBe((await turnOf(first))?.user_id);
    expect((await turnOf(fourth))?.user_id).toBe((await turnOf(second))?.user_id);
    expect((await turnOf(first))?.user_id).not.toBe((await turnOf(second))?.user_id);
  });
});

describe('a user known only by their BSUID whose BSUID changes', () => {
  it('keeps their user and session at the new BSUID, the notice answered by nothing; a redelivered notice changes nothing', async () => {
    const [old, next] = [bsuid(), bsuid()];
    const before = await say({ bsuid: old }, 'before');
    await system.waitFor(async () => (await sentTo(old)) === 1, 'the answer');
    const changed = webhooks.waUserIdChange(old, next);
    expect((await webhooks.postWhatsApp(changed)).status).toBe(200);
    const after = await say({ bsuid: next }, 'after');
    await system.waitFor(async () => (await sentTo(next)) === 2, 'the answer at the new BSUID, both recorded under it');
    const turn = await turnOf(before);
    expect(await turnOf(after)).toEqual(turn);
    const userId = turn?.user_id as string;
    expect(await identities(userId)).toEqual([{ external_id: next, bsuid: next }]);

    expect((await webhooks.postWhatsApp(changed)).status).toBe(200);
    const again = await say({ bsuid: next }, 'again');
    await system.waitFor(() => graph.received(next).length === 2, 'the next answer');
    expect(await turnOf(again)).toEqual(turn);
    expect(await identities(userId)).toEqual([{ external_id: next, bsuid: next }]);
    expect(bodies(old)).toEqual(['echo: before']);
    expect(bodies(next)).toEqual(['echo: after', 'echo: again']);
  });

  it('leaves both users as they are when the new BSUID already has its own', async () => {
    const [mine, theirs] = [bsuid(), bsuid()];
    const [first, second] = [await say({ bsuid: mine }, 'mine'), await say({ bsuid: theirs }, 'theirs')];
    await system.waitFor(() => graph.received(mine).length === 1 && graph.received(theirs).length === 1, 'the answers');
    expect((await webhooks.postWhatsApp(webhooks.waUserIdChange(mine, theirs))).status).toBe(200);
    const [third, fourth] = [await say({ bsuid: mine }, 'still mine'), await say({ bsuid: theirs }, 'still theirs')];
    await system.waitFor(() => graph.received(mine).length === 2 && graph.received(theirs).length === 2, 'the next answers');
    expect((await turnOf(third))?.user_id).toBe((await turnOf(first))?.user_id);
    expect((await turnOf(fourth))?.user_id).toBe((await turnOf(second))?.user_id);
    expect((await turnOf(first))?.user_id).not.toBe((await turnOf(second))?.user_id);
  });
});
