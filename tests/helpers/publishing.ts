import { randomUUID } from 'node:crypto';
import {
  createClientRedis,
  createDb,
  createQueues,
  EventWriter,
  OutboxPublisher,
  QUEUE_NAMES,
  type Db,
  type Queues,
  type Redis,
} from '@assistant/shared';

/** What tests of a transition's outbox need: the database, Redis, the queues and a publisher, under a prefix of their own. */
export interface Publishing {
  db: Db;
  redis: Redis;
  prefix: string;
  queues: Queues;
  events: EventWriter;
  outbox: OutboxPublisher;
  /** Removes the prefix's queues and closes every connection. */
  close: () => Promise<void>;
}

export function publishing(name: string): Publishing {
  const db = createDb(process.env.DATABASE_URL as string, { max: 4 });
  const redis = createClientRedis(process.env.REDIS_URL as string);
  const prefix = `${process.env.QUEUE_PREFIX}-${name}-${randomUUID().slice(0, 8)}`;
  const queues = createQueues(redis, prefix, () => undefined);
  const events = new EventWriter(redis, prefix, 60);
  return {
    db,
    redis,
    prefix,
    queues,
    events,
    outbox: new OutboxPublisher(db, events, queues),
    close: async () => {
      for (const queue of QUEUE_NAMES) await queues[queue].obliterate({ force: true });
      await queues.close();
      await redis.quit();
      await db.end();
    },
  };
}
