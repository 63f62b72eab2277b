import type { DbClient } from '../db';
import { jobId } from '../queues';
import { outboxJob, type OutboxEntry } from './outbox';
import type { TurnMachine } from './turn-machine';
import type { TaskRow, TurnState } from './turn-state';

/** The job that runs a task on the tool worker; its id makes a second add of it a no-op. */
export function runToolJob(turnId: string, taskId: string): OutboxEntry {
  return outboxJob('tool-calls', 'run-tool', { taskId, turnId }, { jobId: jobId('task', taskId) });
}

/**
 * Sends the next task to the tool worker: marks it started and queues its job, in one statement
 * guarded by the version the agent read. The tool worker records the result and queues the
 * turn's next `advance` (services/tool-worker/src/run-tool.ts).
 */
export async function dispatch(m: TurnMachine, state: TurnState, task: TaskRow): Promise<boolean> {
  const { turn } = state;
  const entries = [runToolJob(turn.id, task.id)];
  const updated = await m.db.query(
    `WITH turn AS (
       UPDATE turns SET version = version + 1, outbox = outbox || $4::jsonb
       WHERE id = $1 AND version = $2 AND status = 'running' AND claim IS NULL RETURNING id)
     UPDATE tasks SET status = 'in_progress', started_at = NOW() WHERE id = $3 AND EXISTS (SELECT 1 FROM turn)`,
    [turn.id, turn.version, task.id, JSON.stringify(entries)],
  );
  if (updated.rowCount !== 1) return false;
  await m.outbox.publish(turn.id, turn.origin, entries);
  return true;
}

/**
 * Hands the turn on from a task that just succeeded to the next one of its step, inside the
 * transaction that completes it: the next task decide() would dispatch (approved or pending, in
 * the model's order) is marked started, so the tool worker queues its job instead of an
 * `advance`, and the turn goes from tool to tool without a trip through the agent. Answers that
 * task's id, or nothing when the agent must decide (no such task, or the turn stopped running).
 * The turn row is locked before the task, the order a cancel takes them in.
 */
export async function handOffToNextTask(client: DbClient, turnId: string, finishedTaskId: string): Promise<string | undefined> {
  const next = await client.query<{ id: string }>(
    `WITH turn AS (SELECT id FROM turns WHERE id = $1 AND status = 'running' AND claim IS NULL FOR NO KEY UPDATE)
     UPDATE tasks SET status = 'in_progress', started_at = NOW()
     WHERE status IN ('approved', 'pending') AND id = (
       SELECT k.id FROM tasks k JOIN turn ON k.turn_id = turn.id
       WHERE k.iteration = (SELECT iteration FROM tasks WHERE id = $2) AND k.status IN ('approved', 'pending')
       ORDER BY k.position LIMIT 1)
     RETURNING id`,
    [turnId, finishedTaskId],
  );
  return next.rows[0]?.id;
}
