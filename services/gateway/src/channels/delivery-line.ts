import { Job, type Queue } from 'bullmq';
import { userKeys, type ChannelAddress, type Redis } from '@assistant/shared';

/** A line nobody joins for this long is dropped with its (stale) members. */
const LINE_TTL_MS = 24 * 3_600_000;

/**
 * A chat's deliveries go out in the order they were queued (docs/channels.md#delivery).
 *
 * Jobs leave the queue in order, so a delivery can only be overtaken while it is in flight on
 * another gateway or waits: out for a 429's `retry_after`, a retry's backoff, or handed back by a
 * gateway without its channel. A delivery joins its chat's line, a sorted set scored by when it
 * was queued, when it is taken, and stays there until it ends; one that finds an earlier delivery
 * in the line waits behind it. Within one gateway a chat's deliveries also run one at a time.
 */
export class DeliveryLines {
  private readonly running = new Map<string, Promise<unknown>>();

  constructor(
    private readonly redis: Redis,
    private readonly queue: Queue,
    private readonly prefix: string,
  ) {}

  /** Runs `work` after this gateway's earlier work for the same chat has settled. */
  async alone<T>(to: ChannelAddress, work: () => Promise<T>): Promise<T> {
    const chat = this.key(to);
    const mine = (this.running.get(chat) ?? Promise.resolve()).then(work, work);
    const settled = mine.catch(() => undefined);
    this.running.set(chat, settled);
    try {
      return await mine;
    } finally {
      if (this.running.get(chat) === settled) this.running.delete(chat);
    }
  }

  /** Whether a delivery queued before `job` is still waiting in the chat's line. */
  async behind(to: ChannelAddress, job: Job): Promise<boolean> {
    const key = this.key(to);
    for (;;) {
      const [first, score] = await this.redis.zrange(key, 0, 0, 'WITHSCORES');
      if (first === undefined || first === job.id) return false;
      if (Number(score) > job.timestamp || (Number(score) === job.timestamp && first > (job.id as string))) return false;
      if (await this.pending(first)) return true;
      // Its job ended without leaving the line (erased with its user, or a crash in between).
      await this.redis.zrem(key, first);
    }
  }

  /** Puts `job` in the chat's line, at the place its queueing time gives it. */
  async join(to: ChannelAddress, job: Job): Promise<void> {
    const key = this.key(to);
    await this.redis
      .multi()
      .zadd(key, 'NX', job.timestamp, job.id as string)
      .pexpire(key, LINE_TTL_MS)
      .exec();
  }

  /** Takes `job` out of the chat's line. */
  async leave(to: ChannelAddress, job: Job): Promise<void> {
    await this.redis.zrem(this.key(to), job.id as string);
  }

  private async pending(jobId: string): Promise<boolean> {
    const job = await Job.fromId(this.queue, jobId);
    if (!job) return false;
    const state = await job.getState();
    return state !== 'completed' && state !== 'failed' && state !== 'unknown';
  }

  private key(to: ChannelAddress): string {
    return userKeys.deliveryLine(this.prefix, to);
  }
}
