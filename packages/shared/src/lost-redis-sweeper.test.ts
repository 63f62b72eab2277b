import { randomUUID } from 'node:crypto';
import { Job } from 'bullmq';
import { insertTestUser } from '../../../tests/helpers/db';
import { createDb, type Db } from './db';
import { createLogger } from './logger';
import { lostRedisSweep } from './lost-redis-sweeper';
import { createQueues, jobId, type Queues } from './queues';
import { createClientRedis, type Redis } from './redis';

let db: Db;
let redis: Redis;
let queues: Queues;
const prefix = `${process.env.QUEUE_PREFIX}-lost-${randomUUID().slice(0, 8)}`;

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string);
  redis = createClientRedis(process.env.REDIS_URL as string);
  queues = createQueues(redis, prefix, () => undefined);
});

afterAll(async () => {
  await queues.close();
  const keys = await redis.keys(`${prefix}:*`);
  if (keys.length > 0) await redis.del(...keys);
  await redis.quit();
  await db.end();
});

describe('lostRedisSweep', () => {
  it('queues again the chat events of recent turns past one that no longer reads as a delivery, and then marks Redis as kept', async () => {
    const { userId, sessionId } = await insertTestUser(db);
    /** A chat turn that ended now, sent to `origin` one message kept as its chat event; answers that event's key. */
    const chatTurn = async (origin: Record<string, string>, content: string): Promise<string> => {
      const key = `${randomUUID()}.message`;
      await db.query(
        `INSERT INTO turns (user_id, session_id, session_key, input, origin, finished_at, chat_events)
         VALUES ($1, $2, 'agent:main:main', 'hi', $3, NOW(), $4)`,
        [userId, sessionId, origin, JSON.stringify([{ kind: 'event', key, event: { type: 'message', role: 'assistant', content } }])],
      );
      return key;
    };
    // Kept under an older schema, say: an address without its chat.
    const unreadable = await chatTurn({ channel: 'telegram' }, 'lost for good');
    const answer = await chatTurn({ channel: 'telegram', chat_id: '42' }, 'the answer');
    const config = { QUEUE_PREFIX: prefix, SESSION_IDLE_SECONDS: 3_600, TOOL_TIMEOUT_MS: 10_000 };

    await lostRedisSweep({ db, redis, queues, config: config as never, logger: createLogger('lost-redis-test', 'silent') })();

    const queued = await Job.fromId(queues.deliveries, jobId('deliver', answer));
    expect(queued?.data).toMatchObject({ to: { chat_id: '42' }, event: { content: 'the answer' } });
    expect(await Job.fromId(queues.deliveries, jobId('deliver', unreadable))).toBeUndefined();
    expect(await redis.exists(`${prefix}:data-kept`)).toBe(1);
  });
});
