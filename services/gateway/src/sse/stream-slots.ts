import { randomUUID } from 'node:crypto';
import { userKeys, withScripts, type Redis, type ScriptCommand, type ScriptPipeline } from '@assistant/shared';

/** docs/events.md#limits: open event streams one user may hold at once, across every gateway. */
export const MAX_OPEN_STREAMS_PER_USER = 20;
/** A slot not renewed for this long is free again: a gateway that dies frees its streams' slots. */
export const SLOT_LEASE_MS = 15_000;
const RENEW_MS = 5_000;
const RETRY_AFTER_MAX_SECONDS = 2;

/**
 * One sorted set per user: a member per open stream, scored by when its lease ends (Redis time,
 * so gateways with skewed clocks agree). Lapsed leases are dropped before counting. Answers -1
 * when the slot is taken, else the milliseconds until the earliest lease ends.
 */
const ACQUIRE = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', now)
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then
  local first = redis.call('ZRANGE', KEYS[1], 0, 0, 'WITHSCORES')
  return tonumber(first[2]) - now
end
redis.call('ZADD', KEYS[1], now + tonumber(ARGV[3]), ARGV[1])
redis.call('PEXPIRE', KEYS[1], ARGV[3])
return -1
`;

/** Extends a lease still held: a slot already released or lapsed is not brought back. */
const RENEW = `
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  redis.call('ZADD', KEYS[1], 'XX', now + tonumber(ARGV[2]), ARGV[1])
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
end
return 0
`;

export type SlotAnswer = { granted: true; release: () => void } | { granted: false; retryAfterSeconds: number };

/** The slots this gateway holds, renewed together on one timer while their streams are open. */
export class StreamSlots {
  private readonly held = new Map<string, string>();
  private readonly redis: Redis & Record<'acquireStreamSlot' | 'renewStreamSlot', ScriptCommand>;

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly onError: (error: unknown) => void,
  ) {
    this.redis = withScripts(redis, {
      acquireStreamSlot: { numberOfKeys: 1, lua: ACQUIRE },
      renewStreamSlot: { numberOfKeys: 1, lua: RENEW },
    });
    setInterval(() => void this.renew(), RENEW_MS).unref();
  }

  async acquire(userId: string): Promise<SlotAnswer> {
    const key = userKeys.streamSlots(this.prefix, userId);
    const member = randomUUID();
    const wait = Number(await this.redis.acquireStreamSlot(key, member, MAX_OPEN_STREAMS_PER_USER, SLOT_LEASE_MS));
    // A slot frees whenever a stream closes, usually long before the first lease would lapse.
    if (wait >= 0) return { granted: false, retryAfterSeconds: Math.min(RETRY_AFTER_MAX_SECONDS, Math.max(1, Math.ceil(wait / 1000))) };
    this.held.set(member, key);
    return {
      granted: true,
      release: () => {
        if (!this.held.delete(member)) return;
        // A failed release only keeps the slot until its lease lapses.
        this.redis.zrem(key, member).catch(this.onError);
      },
    };
  }

  private async renew(): Promise<void> {
    if (this.held.size === 0) return;
    // One round trip for every lease.
    const pipeline = this.redis.pipeline() as ScriptPipeline<'renewStreamSlot'>;
    for (const [member, key] of this.held) pipeline.renewStreamSlot(key, member, SLOT_LEASE_MS);
    await pipeline.exec().catch(this.onError);
  }
}
