import type { Runtime } from '../runtime';
import { everyInterval, singlePass } from '../sweeps';
import { NOT_FINISHED_SQL } from './turn-status';

/**
 * The safety net under the outbox: a process that dies between a commit and its publish leaves
 * entries behind, and nothing else may touch that turn again (a message accepted by a gateway
 * that then died has no job yet). Every interval this looks for turns with pending entries and
 * publishes those whose first entry it already saw pending last time, so it never races the
 * normal path on fresh entries, nor on a batch waiting for its job to load the turn and remove
 * it. Publishing twice is harmless anyway (deduplicated events, deterministic job ids).
 */
export function startOutboxSweeper(runtime: SweeperRuntime, intervalMs = 5_000): () => void {
  return everyInterval(outboxSweep(runtime), intervalMs);
}

type SweeperRuntime = Pick<Runtime, 'db' | 'outbox' | 'logger'>;

/**
 * Turns with pending entries, at most 500 of each kind per pass: finished ones through
 * `ended_with_outbox` and unfinished ones through their partial index (idx_turns_lane), so that
 * no index depends on the outbox of a running turn, whose updates stay HOT (migration 0210). Each
 * kind has its own limit, so the batches of many running turns cannot hide one an ended turn left.
 */
const PENDING_OUTBOXES = `(SELECT id, outbox->0->>'key' AS first FROM turns WHERE ended_with_outbox LIMIT 500)
  UNION ALL (SELECT id, outbox->0->>'key' FROM turns WHERE ${NOT_FINISHED_SQL} AND outbox <> '[]'::jsonb LIMIT 500)`;

/** One pass of the sweeper each time it is called (a pass still running makes it a no-op). */
export function outboxSweep(runtime: SweeperRuntime): () => Promise<void> {
  // Each turn with pending entries, by the key of its first one: a turn that moves on between two
  // sweeps (each batch removed by the next job's load) never shows the same first entry twice.
  let suspects = new Map<string, string>();
  return singlePass(runtime.logger, 'outbox sweep', async () => {
    const found = await runtime.db.query<{ id: string; first: string }>(PENDING_OUTBOXES);
    const pending = new Map(found.rows.map((row) => [row.id, row.first]));
    for (const [turnId, first] of pending) {
      if (suspects.get(turnId) !== first) continue;
      runtime.logger.warn({ turnId }, 'publishing a turn outbox left behind');
      await runtime.outbox.flush(turnId);
    }
    suspects = pending;
  });
}
