import type { Queryable } from '@assistant/shared';

/**
 * Ends the open event streams whose access has ended since they opened: the API key they were
 * opened with was revoked, or their user was disabled or is being erased (that user's turns end
 * with nothing published, no `done` either, since their events go with them, so nothing else
 * would end those streams). One query per beat covers every stream open on this gateway.
 */
export class RevokedStreams {
  /** The open streams' `close`, by turn id and API key id. */
  private readonly open = new Map<string, { turnId: string; keyId: string; closers: Set<() => void> }>();

  constructor(
    private readonly db: Queryable,
    everyMs: number,
    onError: (error: unknown) => void,
  ) {
    setInterval(() => void this.sweep().catch(onError), everyMs).unref();
  }

  /** Watches a stream of `turnId` opened with the key `keyId` until the returned function is called (when it closes). */
  add(turnId: string, keyId: string, close: () => void): () => void {
    const id = `${turnId}:${keyId}`;
    const entry = this.open.get(id) ?? { turnId, keyId, closers: new Set() };
    this.open.set(id, entry);
    entry.closers.add(close);
    return () => {
      entry.closers.delete(close);
      if (entry.closers.size === 0) this.open.delete(id);
    };
  }

  private async sweep(): Promise<void> {
    if (this.open.size === 0) return;
    const entries = [...this.open.entries()];
    const kept = await this.db.query<{ turn_id: string; key_id: string }>(
      `SELECT s.turn_id, s.key_id FROM unnest($1::uuid[], $2::uuid[]) AS s(turn_id, key_id)
       JOIN turns t ON t.id = s.turn_id JOIN users u ON u.id = t.user_id JOIN api_keys k ON k.id = s.key_id
       WHERE u.erasing_at IS NULL AND u.disabled_at IS NULL AND k.revoked_at IS NULL`,
      [entries.map(([, entry]) => entry.turnId), entries.map(([, entry]) => entry.keyId)],
    );
    const live = new Set(kept.rows.map((row) => `${row.turn_id}:${row.key_id}`));
    for (const [id, entry] of entries) {
      if (!live.has(id)) for (const close of [...entry.closers]) close();
    }
  }
}
