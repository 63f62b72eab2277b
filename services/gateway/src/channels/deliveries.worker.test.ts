import { randomUUID } from 'node:crypto';
import { Job, type Worker } from 'bullmq';
import { addJob, createLogger, createWorkerRedis, parseConfig, type Redis, type Runtime } from '@assistant/shared';
import { FakeTelegram } from '../../../../tests/helpers/fake-telegram';
import { publishing, type Publishing } from '../../../../tests/helpers/publishing';
import { waitFor } from '../../../../scripts/lib/wait-for';
import { startDeliveriesWorker } from './deliveries.worker';
import { TelegramClient } from './telegram/telegram.client';

let p: Publishing;
let telegram: FakeTelegram;
const gateways: { worker: Worker; connection: Redis }[] = [];

/**
 * A gateway's deliveries worker, one delivery at a time, as a copy of the gateway process runs it;
 * with Telegram unless told otherwise, on the queues of `on`.
 */
function gateway(on: Publishing = p, withTelegram = true): { worker: Worker; connection: Redis } {
  const config = parseConfig({
    QUEUE_PREFIX: on.prefix,
    WORKER_CONCURRENCY: '1',
    TELEGRAM_BOT_TOKEN: '1:t',
    TELEGRAM_WEBHOOK_SECRET: 's',
    TELEGRAM_API_BASE_URL: telegram.url,
  });
  const runtime = { config, logger: createLogger('gateway', 'silent'), db: on.db, redis: on.redis, queues: on.queues } as Runtime;
  const connection = createWorkerRedis(process.env.REDIS_URL as string);
  const clients = withTelegram ? { telegram: new TelegramClient(config.TELEGRAM_API_BASE_URL, '1:t') } : {};
  return { worker: startDeliveriesWorker(runtime, connection, clients), connection };
}

beforeAll(async () => {
  p = publishing('deliveries-worker');
  telegram = await new FakeTelegram().start();
  gateways.push(gateway(), gateway());
});

afterAll(async () => {
  for (const { worker, connection } of gateways) {
    await worker.close();
    await connection.quit();
  }
  await telegram.stop();
  await p.close();
});

async function reply(chat: number, text: string, on: Publishing = p): Promise<string> {
  const id = `reply.${randomUUID()}`;
  await addJob(on.queues, 'deliveries', 'reply', { to: { channel: 'telegram', chat_id: String(chat) }, text }, { jobId: id });
  return id;
}

describe('the deliveries worker on two gateways', () => {
  it("keeps a chat's order when its next delivery goes to another gateway while the first is in flight and then waits out a 429", async () => {
    const chat = Math.floor(Math.random() * 1e9);
    const first = telegram.hold(chat);
    telegram.throttle(chat, 1);
    await reply(chat, 'first');
    await first.arrived;
    // The first gateway is busy with it: the second takes the next one.
    const second = await reply(chat, 'second');
    await waitFor(async () => ((await Job.fromId(p.queues.deliveries, second))?.attemptsStarted ?? 0) > 0, 'the second gateway taking it');
    first.release();
    await waitFor(() => telegram.received(chat).length === 2, 'both messages', { timeoutMs: 15_000 });
    expect(telegram.received(chat).map((call) => call.body.text)).toEqual(['first', 'second']);
  });

  it("hands back a delivery that waited long in its chat's line to a gateway without its channel, rather than failing it", async () => {
    const apart = publishing('deliveries-hand-back');
    const id = await reply(Math.floor(Math.random() * 1e9), 'waited', apart);
    // Picked up 60 times already, as 30 s behind a chat's 429 make it.
    await apart.redis.hset(`${apart.prefix}:deliveries:${id}`, 'ats', 60);
    const withoutTelegram = gateway(apart, false);
    try {
      const state = () => apart.queues.deliveries.getJobState(id);
      const handedBack = async () => Number(await apart.redis.get(`${apart.prefix}:hand-backs:${id}`)) > 0;
      await waitFor(async () => (await handedBack()) || (await state()) === 'failed', 'the gateway handing it back, or failing it');
      expect(await state()).not.toBe('failed');
    } finally {
      await withoutTelegram.worker.close();
      await withoutTelegram.connection.quit();
      await apart.close();
    }
  });
});
