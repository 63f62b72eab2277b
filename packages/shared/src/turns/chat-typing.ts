import type { Redis } from 'ioredis';
import { withScripts, type ScriptCommand } from '../redis';

/** Takes the due members and pushes each to its next beat in one step, so one gateway sends each beat. */
const CLAIM_DUE = `
local due = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', ARGV[1], 'LIMIT', 0, ARGV[3])
for _, id in ipairs(due) do redis.call('ZADD', KEYS[1], ARGV[2], id) end
return due`;

/**
 * Lists a turn, once per resume: the resume's outbox entry may be published twice (a job that
 * reads the turn before the publisher removed the entry), and a second start must not send
 * WhatsApp's read receipt again after the ticker has taken the turn off the list.
 */
const START = `
if redis.call('SET', KEYS[2], '1', 'NX', 'PX', ARGV[2]) then
  redis.call('ZADD', KEYS[1], 'NX', ARGV[1], ARGV[3])
end
return 0`;

/** How long a resume is remembered: far longer than any publish of its entry can take. */
const RESUME_MEMORY_MS = 60 * 60_000;

/**
 * The chat turns that should show "typing…" (docs/channels.md#typing): one Redis sorted set of turn ids,
 * scored by when their indicator is next due. Kept in Redis rather than in a timer per turn, so
 * it survives any process dying and costs nothing for turns without a chat: only the outbox of a
 * turn with an origin writes here, and the gateways' tickers read it (docs/architecture.md).
 */
export class ChatTyping {
  private readonly key: string;
  private readonly redis: Redis & Record<'startTyping' | 'claimDueTyping', ScriptCommand>;
  private readonly startListeners: (() => void)[] = [];

  constructor(redis: Redis, prefix: string) {
    this.redis = withScripts(redis, {
      startTyping: { numberOfKeys: 2, lua: START },
      claimDueTyping: { numberOfKeys: 1, lua: CLAIM_DUE },
    });
    this.key = `${prefix}:chat-typing`;
  }

  /**
   * Due at once, unless listed already (a running turn keeps its rhythm) or this resume (the key
   * of the outbox entry that resumed the turn) was seen before.
   */
  async start(turnId: string, resumeKey: string, now = Date.now()): Promise<void> {
    await this.redis.startTyping(this.key, `${this.key}:resumed:${resumeKey}`, now, RESUME_MEMORY_MS, turnId);
    for (const listener of this.startListeners) listener();
  }

  /**
   * Called after each start in this process: a gateway's ticker beats at once rather than at its
   * next beat, so a turn answered within a fraction of a second still shows it is being worked on
   * before the answer (docs/channels.md#typing).
   */
  onStart(listener: () => void): void {
    this.startListeners.push(listener);
  }

  async stop(...turnIds: string[]): Promise<void> {
    if (turnIds.length > 0) await this.redis.zrem(this.key, ...turnIds);
  }

  /** Up to `limit` turns whose indicator is due, each moved `intervalMs` on. */
  async claimDue(intervalMs: number, limit: number, now = Date.now()): Promise<string[]> {
    const due = await this.redis.claimDueTyping(this.key, now, now + intervalMs, limit);
    return Array.isArray(due) ? due.map(String) : [];
  }
}
