import type { Queryable } from '@assistant/shared';

/**
 * Ends the open event streams of turns whose user is being erased (or is gone): their turns end
 * with nothing published, no `done` either, since their events go with them, so nothing else
 * would end those streams. One query per beat covers every stream open on this gateway.
 */
export class ErasedStreams {
  /** The open streams' `close`, by turn id. */
  private readonly open = new Map<string, Set<() => void>>();

  constructor(
    private readonly db: Queryable,
    everyMs: number,
    onError: (error: unknown) => void,
  ) {
    setInterval(() => void this.sweep().catch(onError), everyMs).unref();
  }

  /** Watches a stream of `turnId` until the returned function is called (when it closes). */
  add(turnId: string, close: () => void): () => void {
    const closers = this.open.get(turnId) ?? new Set();
    this.open.set(turnId, closers.add(close));
    return () => {
      closers.delete(close);
      if (closers.size === 0) this.open.delete(turnId);
    };
  }

  private async sweep(): Promise<void> {
    if (this.open.size === 0) return;
    const turnIds = [...this.open.keys()];
    const kept = await this.db.query<{ id: string }>(
      `SELECT t.id FROM turns t JOIN users u ON u.id = t.user_id WHERE t.id = ANY($1::uuid[]) AND u.erasing_at IS NULL`,
      [turnIds],
    );
    const live = new Set(kept.rows.map((row) => row.id));
    for (const turnId of turnIds) {
      if (!live.has(turnId)) for (const close of [...(this.open.get(turnId) ?? [])]) close();
    }
  }
}
