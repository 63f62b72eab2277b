import { createHash } from 'node:crypto';
import { Redis } from 'ioredis';
import { withTimeout } from './db';

export { Redis };

/**
 * Connection for BullMQ workers and blocking reads: commands wait for a reconnect instead of
 * failing (BullMQ requires maxRetriesPerRequest: null).
 */
export function createWorkerRedis(url: string): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: null,
    enableReadyCheck: true,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

/**
 * Connection for producers and request handlers: fails fast while Redis is down so an HTTP
 * request answers 503 instead of hanging; reconnects by itself in the background.
 */
export function createClientRedis(url: string): Redis {
  return new Redis(url, {
    maxRetriesPerRequest: 1,
    enableOfflineQueue: true,
    connectTimeout: 2_000,
    commandTimeout: 5_000,
    retryStrategy: (attempt) => Math.min(attempt * 200, 2_000),
  });
}

export async function pingRedis(redis: Redis, timeoutMs = 1_000): Promise<void> {
  if (redis.status !== 'ready') throw new Error(`Redis connection is ${redis.status}`);
  await withTimeout(redis.ping(), timeoutMs, 'Redis did not answer');
}

/** A Lua script with its SHA-1, computed once. */
export interface LuaScript {
  text: string;
  sha: string;
}

export function luaScript(text: string): LuaScript {
  return { text, sha: createHash('sha1').update(text).digest('hex') };
}

/**
 * Runs a script by its hash, so Redis neither receives nor hashes its text on every call; the
 * text goes once, when Redis does not know the script yet (a new or restarted server).
 */
export async function runScript(redis: Redis, script: LuaScript, keys: string[], args: (string | number)[]): Promise<unknown> {
  try {
    return await redis.evalsha(script.sha, keys.length, ...keys, ...args);
  } catch (error) {
    if (!String(error).includes('NOSCRIPT')) throw error;
    return redis.eval(script.text, keys.length, ...keys, ...args);
  }
}
