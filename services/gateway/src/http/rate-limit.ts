import type { Request } from 'express';
import { userKeys, withScripts, type RateLimitName, type Redis } from '@assistant/shared';
import { userOf } from './auth';
import { HttpError } from './errors';

/** Counts a hit in the current window and returns [hits, milliseconds until the window ends]. */
const HIT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { hits, redis.call('PTTL', KEYS[1]) }
`;

/** Takes back one hit of the current window, if that window is still open (a new one starts at zero anyway). */
const UNHIT = `
if redis.call('EXISTS', KEYS[1]) == 1 then return redis.call('DECR', KEYS[1]) end
return 0
`;

/** The message rate (RATE_LIMIT_MESSAGES_PER_MINUTE): one counter per user for HTTP and channels alike. */
export const MESSAGE_RATE = { name: 'messages', windowMs: 60_000 } as const;

/** Counts one hit of a user in the current fixed window of `name`; the window's end comes with it. */
export async function hitRateLimit(
  redis: Redis,
  prefix: string,
  name: RateLimitName,
  userId: string,
  windowMs: number,
): Promise<{ hits: number; msLeft: number }> {
  const counter = withScripts(redis, { hitRateLimit: { numberOfKeys: 1, lua: HIT } });
  const [hits, msLeft] = (await counter.hitRateLimit(userKeys.rateLimit(prefix, name, userId), windowMs)) as [number, number];
  return { hits, msLeft: Math.max(0, msLeft) };
}

/** Gives back a hit counted for a request that turned out to change nothing (a message refused as `session_busy`). */
export async function unhitRateLimit(redis: Redis, prefix: string, name: RateLimitName, userId: string): Promise<void> {
  const counter = withScripts(redis, { unhitRateLimit: { numberOfKeys: 1, lua: UNHIT } });
  await counter.unhitRateLimit(userKeys.rateLimit(prefix, name, userId));
}

/**
 * A per-user limit kept in Redis, so it holds across every gateway copy: at most `limit`
 * requests per window; past it, 429 with Retry-After. Fixed windows are coarse at their edges
 * but cost one round trip and one key per user. The route counts a request once it knows it is
 * valid, so a refused one (400, 413) uses up nothing.
 */
export function rateLimit(
  redis: Redis,
  prefix: string,
  name: RateLimitName,
  limit: number,
  windowMs: number,
  noun = 'messages',
): (req: Request) => Promise<void> {
  return async (req) => {
    if (limit <= 0) return;
    const { hits, msLeft } = await hitRateLimit(redis, prefix, name, userOf(req), windowMs);
    if (hits > limit) {
      const retryAfter = Math.max(1, Math.ceil(msLeft / 1000));
      throw new HttpError(429, 'rate_limited', `too many ${noun}: at most ${limit} per ${windowMs / 1000} s`, undefined, {
        'Retry-After': String(retryAfter),
      });
    }
  };
}
