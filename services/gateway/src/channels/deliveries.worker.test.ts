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

/** A gateway's deliveries worker, one delivery at a time, as a copy of the gateway process runs it. */
function gateway(): void {
  const config = parseConfig({
    QUEUE_PREFIX: p.prefix,
    WORKER_CONCURRENCY: '1',
    TELEGRAM_BOT_TOKEN: '1:t',
    TELEGRAM_WEBHOOK_SECRET: 's',
    TELEGRAM_API_BASE_URL: telegram.url,
  });
  const runtime = { config, logger: createLogger('gateway', 'silent'), db: p.db, redis: p.redis, queues: p.queues } as Runtime;
  const connection = createWorkerRedis(process.env.REDIS_URL as string);
  const clients = { telegram: new TelegramClient(config.TELEGRAM_API_BASE_URL, '1:t') };
  gateways.push({ worker: startDeliveriesWorker(runtime, connection, clients), connection });
}

beforeAll(async () => {
  p = publishing('deliveries-worker');
  telegram = await new FakeTelegram().start();
  gateway();
  gateway();
});

afterAll(async () => {
  for (const { worker, connection } of gateways) {
    await worker.close();
    await connection.quit();
  }
  await telegram.stop();
  await p.close();
});

async function reply(chat: number, text: string): Promise<string> {
  const id = `reply.${randomUUID()}`;
  await addJob(p.queues, 'deliveries', 'reply', { to: { channel: 'telegram', chat_id: String(chat) }, text }, { jobId: id });
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
});
