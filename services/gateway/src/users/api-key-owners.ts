import { BoundedMap, tickBatched, type Queryable, type Redis, type Runtime } from '@assistant/shared';
import { hashApiKey, type KeyOwner } from './users.service';

/** The most owners a gateway keeps (a few MB at most), and how long it keeps one at most. */
const MAX_KEPT = 10_000;
const KEEP_MS = 10_000;

/**
 * Who owns an API key (and whether that user is disabled), read from PostgreSQL and kept by the
 * gateway, so a client's requests do not each cost a statement (two per turn: the message and its
 * event stream). A change that ends a key's validity or changes its user's state (a revoked key, a
 * user disabled, enabled or being erased) is announced with `changed()` once it has committed:
 * the gateway that made it forgets the user's keys before answering, and every other gateway
 * forgets them when the invalidation reaches its subscriber: Redis queues it for every subscriber
 * before it answers the announcement, so before the change's response has left. A gateway keeps owners only while
 * that subscriber is connected and subscribed, and forgets them all when it disconnects: an
 * invalidation it could have missed never leaves a stale owner behind. An owner read while a
 * change was being announced is not kept, and none is kept longer than KEEP_MS, should an
 * announcement fail after its change committed. Unknown keys are never kept.
 */
export class ApiKeyOwners {
  private readonly kept = new BoundedMap<string, { owner: KeyOwner; until: number }>(MAX_KEPT);
  private readonly channel: string;
  private listening = false;
  /** Bumped by every forget: a read that began before one does not keep what it found. */
  private generation = 0;
  /** The requests of one tick share the statement: a burst of messages costs a few reads, not one each. */
  private readonly read: (keyHash: string) => Promise<KeyOwner | undefined>;

  constructor(
    db: Queryable,
    private readonly redis: Redis,
    prefix: string,
    /** An announcement that failed: the change stands (it has committed), other gateways forget it within KEEP_MS. */
    private readonly announceFailed: (error: unknown) => void,
  ) {
    this.channel = `${prefix}:api-key-owners-changed`;
    this.read = tickBatched(async (hashes: string[]) => {
      const found = await db.query<{ key_hash: string; key_id: string; user_id: string; disabled: boolean }>(
        `SELECT k.key_hash, k.id AS key_id, k.user_id, u.disabled_at IS NOT NULL AS disabled
         FROM api_keys k JOIN users u ON u.id = k.user_id
         WHERE k.key_hash = ANY($1::text[]) AND k.revoked_at IS NULL AND u.erasing_at IS NULL`,
        [hashes],
      );
      return new Map(found.rows.map((row) => [row.key_hash, { keyId: row.key_id, userId: row.user_id, disabled: row.disabled }]));
    });
  }

  /** A gateway's: it keeps owners only once `listen()` is called (main.ts). */
  static of(runtime: Runtime): ApiKeyOwners {
    return new ApiKeyOwners(runtime.db, runtime.redis, runtime.config.QUEUE_PREFIX, (error) =>
      runtime.logger.warn({ err: error }, 'announcing a change to API keys failed'),
    );
  }

  /** Keeps owners from now on, while `subscriber` (a connection of its own) hears every change. */
  listen(subscriber: Redis): void {
    subscriber.on('message', (channel: string, userId: string) => {
      if (channel === this.channel) this.forget(userId);
    });
    // Only reads that begin once the subscription holds are kept: one begun before could have
    // missed a change announced meanwhile.
    const subscribe = () => {
      subscriber.subscribe(this.channel).then(
        () => {
          this.generation += 1;
          this.listening = subscriber.status === 'ready';
        },
        () => undefined,
      );
    };
    subscriber.on('ready', subscribe);
    subscriber.on('close', () => {
      this.listening = false;
      this.forget();
    });
    if (subscriber.status === 'ready') subscribe();
  }

  /** The key's owner, or undefined for a key that is unknown, revoked, or whose user is being erased. */
  async ownerOf(apiKey: string): Promise<KeyOwner | undefined> {
    const keyHash = hashApiKey(apiKey);
    const kept = this.kept.get(keyHash);
    if (this.listening && kept && kept.until > Date.now()) return kept.owner;
    const generation = this.generation;
    const owner = await this.read(keyHash);
    if (owner && this.listening && generation === this.generation) this.kept.set(keyHash, { owner, until: Date.now() + KEEP_MS });
    else this.kept.delete(keyHash);
    return owner;
  }

  /** After a change to the user's keys or state has committed: every gateway forgets them. */
  async changed(userId: string): Promise<void> {
    this.forget(userId);
    await this.redis.publish(this.channel, userId).catch(this.announceFailed);
  }

  /** Forgets the user's owners, or all of them. */
  private forget(userId?: string): void {
    this.generation += 1;
    for (const [keyHash, { owner }] of this.kept) if (userId === undefined || owner.userId === userId) this.kept.delete(keyHash);
  }
}
