import { stripUuids } from '../text';
import { fail } from '../tools/tool-result';
import { outboxEvent, type OutboxEntry } from './outbox';
import type { NewTask, StepMessage } from './step-rows';
import type { PlannedCall } from './turn-state';

export interface UnrunTask {
  id: string;
  call: PlannedCall;
  iteration: number;
  position: number;
  /** Its place among the calls of its step (1 for the first), which the cap counts. */
  callNumber: number;
  maxCalls: number;
}

/**
 * A planned call that will not run (refused arguments, an unknown tool, or past the step's cap),
 * as the planning statement records it: a finished task with its `success: false` result and the
 * tool message the model reads next step. No tool job, no approval, no retry.
 */
export function unrunTask(task: UnrunTask): { row: NewTask; message: StepMessage; entries: OutboxEntry[] } {
  const { call } = task;
  const ref = `task_${task.position}`;
  const result = call.problem
    ? fail(call.problem, 'Call one of the tools you were given, with a JSON object of valid arguments.')
    : fail(
        `Not run: at most ${task.maxCalls} tool calls of one step run, and this was call ${task.callNumber} of the step.`,
        'Call it again in a later step if it is still needed.',
      );
  const text = stripUuids(JSON.stringify(result));
  const error = stripUuids(result.success ? '' : result.error);
  const row: NewTask = {
    id: task.id,
    ref,
    position: task.position,
    iteration: task.iteration,
    call_id: call.id,
    tool_name: call.name,
    arguments: {},
    description: `Call ${call.name}`,
    mutates: false,
    status: call.problem ? 'failed' : 'skipped',
    failure: call.problem ? 'invalid' : null,
    result: text,
    error,
  };
  const message: StepMessage = { role: 'tool', content: text, tool_call_id: call.id };
  if (!call.problem) return { row, message, entries: [outboxEvent({ type: 'task_update', task_id: ref, status: 'skipped' })] };
  // The same events as a call the tool worker refuses for invalid arguments.
  return {
    row,
    message,
    entries: [
      outboxEvent({ type: 'tool_complete', task_id: ref, tool_name: call.name, result: text }),
      outboxEvent({ type: 'task_update', task_id: ref, status: 'failed', error, duration_ms: 0 }),
    ],
  };
}
