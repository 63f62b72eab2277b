import type { DbClient } from '../db';
import { stripUuids } from '../text';
import { fail } from '../tools/tool-result';
import { outboxEvent, type OutboxEntry } from './outbox';
import type { PlannedCall, TurnRow } from './turn-state';

export interface UnrunTask {
  call: PlannedCall;
  iteration: number;
  position: number;
  maxCalls: number;
}

/**
 * Records a planned call that will not run (refused arguments, an unknown tool, or past the
 * step's cap) as a finished task with its `success: false` result and the tool message the model
 * reads next step, inside the planning transaction: no tool job, no approval, no retry.
 */
export async function recordUnrunTask(client: DbClient, turn: TurnRow, task: UnrunTask): Promise<OutboxEntry[]> {
  const { call } = task;
  const ref = `task_${task.position}`;
  const result = call.problem
    ? fail(call.problem, 'Call one of the tools you were given, with a JSON object of valid arguments.')
    : fail(
        `Not run: at most ${task.maxCalls} tool calls of one step run, and this was call ${task.position}.`,
        'Call it again in a later step if it is still needed.',
      );
  const text = stripUuids(JSON.stringify(result));
  const error = stripUuids(result.success ? '' : result.error);
  const status = call.problem ? 'failed' : 'skipped';
  await client.query(
    `INSERT INTO tasks (turn_id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status,
       failure, result, error, started_at, finished_at, duration_ms)
     VALUES ($1, $2, $3, $4, $5, $6, '{}', $7, false, $8, $9, $10, $11, NOW(), NOW(), 0)`,
    [
      turn.id,
      ref,
      task.position,
      task.iteration,
      call.id,
      call.name,
      `Call ${call.name}`,
      status,
      call.problem ? 'invalid' : null,
      text,
      error,
    ],
  );
  await client.query(`INSERT INTO messages (session_id, turn_id, role, content, tool_call_id) VALUES ($1, $2, 'tool', $3, $4)`, [
    turn.session_id,
    turn.id,
    text,
    call.id,
  ]);
  if (!call.problem) return [outboxEvent({ type: 'task_update', task_id: ref, status: 'skipped' })];
  // The same events as a call the tool worker refuses for invalid arguments.
  return [
    outboxEvent({ type: 'tool_complete', task_id: ref, tool_name: call.name, result: text }),
    outboxEvent({ type: 'task_update', task_id: ref, status: 'failed', error, duration_ms: 0 }),
  ];
}
