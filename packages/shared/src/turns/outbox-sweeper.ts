import type { Runtime } from '../runtime';

/**
 * The safety net under the outbox: a process that dies between a commit and its publish leaves
 * entries behind, and nothing else may touch that turn again (a message accepted by a gateway
 * that then died has no job yet). Every interval this looks for turns with pending entries and
 * publishes those it already saw pending last time, so it never races the normal path on fresh
 * entries. Publishing twice is harmless anyway (deduplicated events, deterministic job ids).
 */
export function startOutboxSweeper(runtime: Pick<Runtime, 'db' | 'outbox' | 'logger'>, intervalMs = 5_000): () => void {
  let suspects = new Set<string>();
  let sweeping = false;
  const sweep = async () => {
    if (sweeping) return;
    sweeping = true;
    try {
      const found = await runtime.db.query<{ id: string }>(`SELECT id FROM turns WHERE outbox <> '[]'::jsonb LIMIT 500`);
      const pending = new Set(found.rows.map((row) => row.id));
      for (const turnId of pending) {
        if (!suspects.has(turnId)) continue;
        runtime.logger.warn({ turnId }, 'publishing a turn outbox left behind');
        await runtime.outbox.flush(turnId);
      }
      suspects = pending;
    } catch (error) {
      runtime.logger.warn({ err: error }, 'outbox sweep failed');
    } finally {
      sweeping = false;
    }
  };
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}
