import type { TaskRow, TurnState } from '@assistant/shared';

export type Decision =
  | { kind: 'wait' }
  | { kind: 'call-model' }
  | { kind: 'dispatch'; task: TaskRow }
  | { kind: 'await-approval' }
  | { kind: 'ask-user'; remaining: TaskRow[] };

const OPEN: ReadonlySet<string> = new Set(['pending', 'awaiting_approval', 'approved', 'in_progress']);

/**
 * What a running turn needs next, from its stored state alone (docs/agent.md). Tasks of one model
 * step run one at a time, in the order the model gave them, except that in manual mode a task
 * waiting for approval does not hold back the read-only ones after it.
 *
 * `jobId` is the job asking: a model call is owned by the job that claimed it, so a retried
 * job resumes its own call and any other job leaves it alone.
 */
export function decide({ turn, tasks }: TurnState, jobId: string): Decision {
  if (turn.status !== 'running') return { kind: 'wait' };
  if (turn.claim !== null) return turn.claim === jobId ? { kind: 'call-model' } : { kind: 'wait' };
  if (tasks.some((task) => task.status === 'in_progress')) return { kind: 'wait' };

  if (turn.autonomous && tasks.some((task) => task.failure === 'error' && !task.asked)) {
    return { kind: 'ask-user', remaining: tasks.filter((task) => task.status === 'pending') };
  }
  const next = tasks.find((task) => task.status === 'approved' || task.status === 'pending');
  if (next) return { kind: 'dispatch', task: next };
  if (tasks.some((task) => task.status === 'awaiting_approval')) return { kind: 'await-approval' };
  if (tasks.some((task) => OPEN.has(task.status))) return { kind: 'wait' };
  return { kind: 'call-model' };
}
