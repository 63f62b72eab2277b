import type { RequestHandler } from 'express';
import type { Redis } from '@assistant/shared';
import { userOf } from './auth';
import { HttpError } from './errors';

/** Counts a hit in the current window and returns [hits, milliseconds until the window ends]. */
const HIT_SCRIPT = `
local hits = redis.call('INCR', KEYS[1])
if hits == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return { hits, redis.call('PTTL', KEYS[1]) }
`;

/**
 * A per-user limit kept in Redis, so it holds across every gateway copy: at most `limit`
 * requests per window; past it, 429 with Retry-After. Fixed windows are coarse at their edges
 * but cost one round trip and one key per user.
 */
export function rateLimit(redis: Redis, prefix: string, name: string, limit: number, windowMs: number): RequestHandler {
  return async (req, _res, next) => {
    if (limit <= 0) return next();
    const key = `${prefix}:ratelimit:${name}:${userOf(req)}`;
    const [hits, ttl] = (await redis.eval(HIT_SCRIPT, 1, key, windowMs)) as [number, number];
    if (hits > limit) {
      const retryAfter = Math.max(1, Math.ceil(ttl / 1000));
      throw new HttpError(429, 'rate_limited', `too many messages: at most ${limit} per ${windowMs / 1000} s`, undefined, {
        'Retry-After': String(retryAfter),
      });
    }
    next();
  };
}
