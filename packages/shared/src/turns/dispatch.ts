import { jobId } from '../queues';
import { outboxJob, type OutboxJob } from './outbox';
import type { TurnMachine } from './turn-machine';
import type { TaskRow, TurnState } from './turn-state';

/** The job that runs a task on the tool worker, `delayMs` from now; its id makes a second add of it a no-op. */
export function runToolJob(turnId: string, taskId: string, delayMs?: number): OutboxJob {
  return outboxJob('tool-calls', 'run-tool', { taskId, turnId }, { jobId: jobId('task', taskId), ...(delayMs ? { delayMs } : {}) });
}

/**
 * SQL: the id of the task decide() dispatches next in a turn's step (the first approved or pending
 * one, in the model's order), for the turn and iteration given as SQL expressions; `except`, a
 * task the statement itself starts (its snapshot still shows it pending).
 */
export function nextTaskSql(turnId: string, iteration: string, except?: string): string {
  return `(SELECT n.id FROM tasks n WHERE n.turn_id = ${turnId} AND n.iteration = ${iteration}
     AND n.status IN ('approved', 'pending')${except ? ` AND n.id <> ${except}` : ''} ORDER BY n.position LIMIT 1)`;
}

/**
 * Sends the next task to the tool worker: marks it started and queues its job, in one statement
 * guarded by the version the agent read. The tool worker records the result and queues the
 * step's next task or the turn's next `advance` (services/tool-worker/src/run-tool.ts).
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
