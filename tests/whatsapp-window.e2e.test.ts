import { randomUUID } from 'node:crypto';
import { Job, Queue, QueueEvents } from 'bullmq';
import type pg from 'pg';
import { Api } from '../scripts/lib/api';
import { FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeGraph } from './helpers/fake-graph';

/**
 * A notice (a reminder firing) that WhatsApp refuses because its user has not written for 24 hours
 * is sent again as WHATSAPP_NOTICE_TEMPLATE, once, whether the send's answer or a later status
 * webhook reports the refusal (docs/channels.md#delivery). Without the template, see
 * channels.e2e.test.ts.
 */
const model = new FakeModel();
const graph = new FakeGraph();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;
let queue: Queue;
let events: QueueEvents;

const WA_APP_SECRET = 'wa-app-secret';
const TEMPLATE = { name: 'reminder_notice', language: { code: 'pt_BR' } };

beforeAll(async () => {
  await Promise.all([model.start(), graph.start()]);
  model.script = (body) => ({ content: `echo: ${userText(body)}` });
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      ...graph.settings(WA_APP_SECRET),
      WHATSAPP_NOTICE_TEMPLATE: TEMPLATE.name,
      WHATSAPP_NOTICE_TEMPLATE_LANGUAGE: TEMPLATE.language.code,
    },
  });
  api = new Api(system.url);
  const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
  queue = new Queue('deliveries', { connection, prefix: system.prefix });
  events = new QueueEvents('deliveries', { connection, prefix: system.prefix });
  await events.waitUntilReady();
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await events.close();
  await queue.close();
  await system.stop();
  await Promise.all([model.stop(), graph.stop()]);
  await db.end();
});

const webhooks = new ChannelWebhooks(() => system.url, 'unused', WA_APP_SECRET);

/** A user whose one chat is a WhatsApp number, linked and confirmed. */
async function whatsappUser(): Promise<{ userId: string; waId: string }> {
  const user = await api.createUser(system.adminToken, { name: 'Reminded' });
  const waId = `55119${webhooks.nextId()}`;
  const { code } = (await user.post('/v1/link-codes')).body;
  expect((await webhooks.postWhatsApp(webhooks.waText(waId, `/link ${code}`))).status).toBe(200);
  await system.waitFor(() => graph.received(waId).length === 1, 'the link confirmation');
  return { userId: user.userId, waId };
}

/** Queues a notify job, as a reminder firing does, and waits for it. */
async function notify(userId: string, text: string, jobId = `notify.${randomUUID()}`): Promise<Job> {
  const job = await queue.add('notify', { userId, text }, { jobId });
  await job.waitUntilFinished(events, 20_000);
  return job;
}

/** Waits for the resend of the notice queued as `notifyJobId`, which must have been queued. */
async function resent(notifyJobId: string): Promise<Job> {
  const job = await Job.fromId(queue, `resend-notice.${notifyJobId}`);
  if (!job) throw new Error(`no resend of ${notifyJobId}`);
  await job.waitUntilFinished(events, 20_000);
  return job;
}

const templatesTo = (waId: string) => graph.received(waId).filter((request) => request.body.type === 'template');
const template = (text: string) => ({ ...TEMPLATE, components: [{ type: 'body', parameters: [{ type: 'text', text }] }] });

describe('a notice outside the 24-hour window', () => {
  it('refused by the send is sent again once as the template; the job queued again sends nothing more', async () => {
    const { userId, waId } = await whatsappUser();
    graph.outsideWindow.add(waId);
    const job = await notify(userId, 'Drink water\n\n- 500 ml');
    await resent(job.id as string);
    expect(graph.requests.filter((request) => request.body.to === waId && request.status === 400)).toHaveLength(1);
    expect(templatesTo(waId).map((request) => request.body.template)).toEqual([template('Drink water - 500 ml')]);
    expect(graph.received(waId)).toHaveLength(2);

    // Both jobs gone from Redis and the notice queued again: refused again, and the template recorded as sent.
    await (await Job.fromId(queue, `resend-notice.${job.id}`))?.remove();
    await job.remove();
    await notify(userId, 'Drink water\n\n- 500 ml', job.id);
    await resent(job.id as string);
    expect(graph.requests.filter((request) => request.body.to === waId && request.status === 400)).toHaveLength(2);
    expect(graph.received(waId)).toHaveLength(2);
  });

  it('accepted, then reported failed by a status webhook, is sent again once as the template; a redelivered status sends nothing', async () => {
    const { userId, waId } = await whatsappUser();
    const job = await notify(userId, 'Stretch 🧘');
    const sent = graph.received(waId).at(-1);
    expect(sent?.body.text).toEqual({ body: 'Stretch 🧘' });
    expect(templatesTo(waId)).toHaveLength(0);

    const status = webhooks.waFailedStatus(sent?.messageId as string, waId);
    expect((await webhooks.postWhatsApp(status)).status).toBe(200);
    await resent(job.id as string);
    expect(templatesTo(waId).map((request) => request.body.template)).toEqual([template('Stretch 🧘')]);

    // Redelivered while the resend's job is kept: nothing is queued; after it is gone: it runs, and sends nothing.
    expect((await webhooks.postWhatsApp(status)).status).toBe(200);
    await (await Job.fromId(queue, `resend-notice.${job.id}`))?.remove();
    expect((await webhooks.postWhatsApp(status)).status).toBe(200);
    await resent(job.id as string);
    expect(graph.received(waId)).toHaveLength(3);
  });

  it('reported failed by a status webhook before its send was recorded is sent again once as the template', async () => {
    const { userId, waId } = await whatsappUser();
    const statuses: number[] = [];
    // The status reaches the gateway, and is answered, before the send's answer does.
    graph.beforeAnswer = async (messageId, recipient) => {
      graph.beforeAnswer = undefined;
      statuses.push((await webhooks.postWhatsApp(webhooks.waFailedStatus(messageId, recipient))).status);
    };
    const job = await notify(userId, 'Call mom');
    expect(statuses).toEqual([200]);
    await system.waitFor(() => Job.fromId(queue, `resend-notice.${job.id}`), 'the resend queued');
    await resent(job.id as string);
    expect(templatesTo(waId).map((request) => request.body.template)).toEqual([template('Call mom')]);
    expect(graph.received(waId)).toHaveLength(3);
  });

  it('reported failed for a message that is not ours is looked for a few more times, then left; a redelivered status adds no look', async () => {
    const messageId = `wamid.${randomUUID()}`;
    const status = webhooks.waFailedStatus(messageId, `55119${webhooks.nextId()}`);
    expect((await webhooks.postWhatsApp(status)).status).toBe(200);
    expect((await webhooks.postWhatsApp(status)).status).toBe(200);
    const recheck = await Job.fromId(queue, `recheck-refusal.${messageId}`);
    if (!recheck) throw new Error('no recheck queued');
    await recheck.waitUntilFinished(events, 20_000);
    // After the webhook's look, four by the job, the redelivery adding none; then it is done, not failed.
    expect(await queue.getJobState(recheck.id as string)).toBe('completed');
    expect((await Job.fromId(queue, recheck.id as string))?.attemptsStarted).toBe(4);
  });

  it('reported failed after an admin disabled its user is not sent again', async () => {
    const { userId, waId } = await whatsappUser();
    const job = await notify(userId, 'Water the plants');
    const sent = graph.received(waId).at(-1);
    const admin = new Api(system.url, system.adminToken);
    expect((await admin.patch(`/v1/admin/users/${userId}`, { disabled: true })).status).toBe(200);

    expect((await webhooks.postWhatsApp(webhooks.waFailedStatus(sent?.messageId as string, waId))).status).toBe(200);
    await resent(job.id as string);
    expect(templatesTo(waId)).toHaveLength(0);
  });

  it('sent at the BSUID of a user whose number showed meanwhile, and reported failed, is sent again to the number', async () => {
    const person = { phone: `55119${webhooks.nextId()}`, bsuid: `BR.${webhooks.nextId()}` };
    expect((await webhooks.postWhatsApp(webhooks.waMessage(person, { type: 'text', text: { body: 'hi' } }))).status).toBe(200);
    await system.waitFor(() => graph.received(person.phone)[0], 'the answer at the number');
    // A notice that was on its way to the BSUID while the number showed is recorded under the BSUID.
    const notifyJobId = `notify.${randomUUID()}`;
    const messageId = `wamid.${randomUUID()}`;
    await db.query(
      `INSERT INTO deliveries (delivery_key, part, channel, recipient, provider_message_id, notice)
       VALUES ($1, 0, 'whatsapp', $2, $3, 'Take the pill')`,
      [notifyJobId, person.bsuid, messageId],
    );

    expect((await webhooks.postWhatsApp(webhooks.waFailedStatus(messageId, person.bsuid))).status).toBe(200);
    await system.waitFor(() => Job.fromId(queue, `resend-notice.${notifyJobId}`), 'the resend queued');
    await resent(notifyJobId);
    expect(templatesTo(person.phone).map((request) => request.body.template)).toEqual([template('Take the pill')]);
  });

  it("sends a turn's answer reported failed for the window nothing more, and logs it", async () => {
    const waId = `55119${webhooks.nextId()}`;
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'hello'))).status).toBe(200);
    const answer = await system.waitFor(() => graph.received(waId)[0], 'the answer');
    expect((await webhooks.postWhatsApp(webhooks.waFailedStatus(answer.messageId as string, waId))).status).toBe(200);
    await system.waitFor(() => system.logs.join('').includes('only notices are sent again'), 'the warning');
    expect(graph.received(waId)).toHaveLength(1);
    const keys = await db.query<{ delivery_key: string }>('SELECT delivery_key FROM deliveries WHERE provider_message_id = $1', [
      answer.messageId,
    ]);
    expect(await Job.fromId(queue, `resend-notice.${keys.rows[0]?.delivery_key}`)).toBeUndefined();
  });
});
