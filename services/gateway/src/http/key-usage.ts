import type { Logger, Queryable } from '@assistant/shared';

/** How stale a key's last_used_at may be: an hour-level "last used" needs no more. */
const WRITE_EVERY_MS = 60_000;

/**
 * Keeps `api_keys.last_used_at` current without an UPDATE per request: each gateway writes a
 * key's time at most once a minute (the first use at once), fire-and-forget, so a slow write
 * never delays a request.
 */
export class KeyUsageRecorder {
  private readonly written = new Map<string, number>();

  constructor(
    private readonly db: Queryable,
    private readonly logger: Logger,
    private readonly everyMs = WRITE_EVERY_MS,
  ) {}

  touch(keyId: string, now = Date.now()): void {
    const last = this.written.get(keyId);
    if (last !== undefined && now - last < this.everyMs) return;
    this.written.set(keyId, now);
    // Bounded memory: a gateway that saw very many keys forgets the old ones (they simply write again).
    if (this.written.size > 10_000) this.forgetBefore(now - this.everyMs);
    this.db
      .query('UPDATE api_keys SET last_used_at = NOW() WHERE id = $1', [keyId])
      .catch((error: unknown) => this.logger.warn({ err: error }, 'could not record key use'));
  }

  private forgetBefore(time: number): void {
    for (const [keyId, at] of this.written) if (at < time) this.written.delete(keyId);
  }
}
