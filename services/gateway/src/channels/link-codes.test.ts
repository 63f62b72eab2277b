import { randomUUID } from 'node:crypto';
import { createClientRedis, type Redis, type Runtime } from '@assistant/shared';
import { countLinkAttempt, LINK_ATTEMPTS } from './link-codes';

let redis: Redis;
let runtime: Runtime;

beforeAll(() => {
  redis = createClientRedis(process.env.REDIS_URL as string);
  runtime = { redis, config: { QUEUE_PREFIX: `${process.env.QUEUE_PREFIX}-link-${randomUUID().slice(0, 8)}` } } as Runtime;
});

afterAll(async () => {
  await redis.quit();
});

describe('/link attempts', () => {
  it('are limited per sender, told once, and for everyone together', async () => {
    const one = Array.from({ length: LINK_ATTEMPTS.perSender + 2 }, () => countLinkAttempt(runtime, 'telegram', '1'));
    expect(await Promise.all(one)).toEqual([
      ...Array.from({ length: LINK_ATTEMPTS.perSender }, () => 'allowed'),
      'sender-limited',
      'sender-silent',
    ]);
    // The first sender's five, then one attempt each from many others.
    const others = LINK_ATTEMPTS.everyone - LINK_ATTEMPTS.perSender;
    for (let sender = 2; sender < 2 + others; sender += 1)
      expect(await countLinkAttempt(runtime, 'whatsapp', String(sender))).toBe('allowed');
    expect(await countLinkAttempt(runtime, 'whatsapp', 'one more')).toBe('everyone-limited');
  });
});
