import { Redis, type ChainableCommander } from 'ioredis';
import { withTimeout } from './db';
import { recipientOf, type ChannelAddress } from './jobs';
import { coalesceWrites } from './socket-writes';

export { Redis };

/** The gateway's rate limits counted per user (http/rate-limit.ts and the routes using it): an erasure removes each one's window. */
export const USER_RATE_LIMITS = ['messages', 'link-codes', 'gotchas', 'api-keys'] as const;
export type RateLimitName = (typeof USER_RATE_LIMITS)[number] | 'link-attempts';

/** Whose `/link` attempts a window counts (channels/link-codes.ts): a chat identity's, by its id at the provider. */
export const linkAttemptsOf = (channel: string, senderId: string) => `${channel}:${senderId}`;

/**
 * Keys named after a user outside any queue, written by the gateway and removed by erasure: a
 * rate-limit window of `name` (http/rate-limit.ts), the slots of their open event streams, and the
 * line of deliveries waiting for a chat of theirs (channels/delivery-line.ts). `/link` attempts
 * are counted under `linkAttemptsOf` a chat instead of a user.
 */
export const userKeys = {
  rateLimit: (prefix: string, name: RateLimitName, userId: string) => `${prefix}:ratelimit:${name}:${userId}`,
  streamSlots: (prefix: string, userId: string) => `${prefix}:sse-streams:${userId}`,
  deliveryLine: (prefix: string, to: ChannelAddress) => `${prefix}:delivery-line:${to.channel}:${recipientOf(to)}`,
};

/**
 * Connection for BullMQ workers and blocking reads: commands wait for a reconnect instead of
 * failing (BullMQ requires maxRetriesPerRequest: null).
 */
export function createWorkerRedis(url: string): Redis {
  return coalescing(
    new Redis(url, {
      maxRetriesPerRequest: null,
      enableReadyCheck: true,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    }),
  );
}

/**
 * Connection for producers and request handlers: fails fast while Redis is down so an HTTP
 * request answers 503 instead of hanging; reconnects by itself in the background.
 */
export function createClientRedis(url: string): Redis {
  return coalescing(
    new Redis(url, {
      maxRetriesPerRequest: 1,
      enableOfflineQueue: true,
      connectTimeout: 2_000,
      commandTimeout: 5_000,
      retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
    }),
  );
}

/**
 * Commands sent within one tick leave in one write, on every socket the connection opens. A
 * database the server does not have (`REDIS_URL` ending in `/99` on a server of 16) stops the
 * process: ioredis would report the refused SELECT and go on in database 0, among another's keys.
 */
function coalescing(redis: Redis): Redis {
  redis.on('connect', () => coalesceWrites(redis.stream));
  redis.on('error', (error: Error) => {
    if (!/DB index is out of range/i.test(error.message)) return;
    process.stderr.write(`REDIS_URL names database ${redis.options.db}, which this Redis server does not have (${error.message})\n`);
    process.exit(1);
  });
  return redis;
}

/**
 * Ends a connection at shutdown: QUIT when Redis answers, so replies in flight arrive first; cut
 * when it does not (down, or taking connections and never answering), where QUIT would wait for it.
 */
export async function closeRedis(redis: Redis, timeoutMs = 1_000): Promise<void> {
  if (redis.status === 'ready') await withTimeout(redis.quit(), timeoutMs, 'Redis did not answer QUIT').catch(() => undefined);
  redis.disconnect();
}

export async function pingRedis(redis: Redis, timeoutMs = 1_000): Promise<void> {
  if (redis.status !== 'ready') throw new Error(`Redis connection is ${redis.status}`);
  await withTimeout(redis.ping(), timeoutMs, 'Redis did not answer');
}

/** A Lua script run as a command of its own: its keys come first in the call, then its arguments. */
export interface ScriptDefinition {
  numberOfKeys: number;
  lua: string;
}

export type ScriptCommand = (...keysThenArgs: (string | number)[]) => Promise<unknown>;

/** A pipeline of a connection with these scripts defined: each queues a call of its script. */
export type ScriptPipeline<N extends string> = ChainableCommander & Record<N, (...keysThenArgs: (string | number)[]) => unknown>;

/**
 * Defines scripts as commands of this connection through ioredis (`defineCommand`), which runs
 * each by its SHA and sends its text only when the socket has not loaded it yet (a new or
 * restarted server). Defining again is a no-op, so each module defines what it runs on the
 * connection it was given; names are global to the connection and must not collide.
 */
export function withScripts<N extends string>(redis: Redis, scripts: Record<N, ScriptDefinition>): Redis & Record<N, ScriptCommand> {
  for (const [name, definition] of Object.entries<ScriptDefinition>(scripts)) {
    if (!(name in redis.scriptsSet)) redis.defineCommand(name, definition);
  }
  return redis as Redis & Record<N, ScriptCommand>;
}
