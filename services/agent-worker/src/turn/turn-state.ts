import type { Queryable, TaskStatus, TurnStatus } from '@assistant/shared';

export interface TurnRow {
  id: string;
  user_id: string;
  session_id: string;
  session_key: string;
  status: TurnStatus;
  input: string;
  iterations: number;
  max_iterations: number;
  autonomous: boolean;
  model: string | null;
  version: number;
  claim: string | null;
}

export interface TaskRow {
  id: string;
  ref: string;
  position: number;
  iteration: number;
  call_id: string;
  tool_name: string;
  arguments: Record<string, unknown> | null;
  description: string;
  mutates: boolean;
  status: TaskStatus;
  failure: 'invalid' | 'error' | null;
  asked: boolean;
}

/** A turn and the tasks the model planned in its latest iteration. */
export interface TurnState {
  turn: TurnRow;
  tasks: TaskRow[];
}

export async function loadTurnState(db: Queryable, turnId: string): Promise<TurnState | undefined> {
  const turns = await db.query<TurnRow>(
    `SELECT id, user_id, session_id, session_key, status, input, iterations,
            COALESCE(max_iterations, 15) AS max_iterations, COALESCE(autonomous, false) AS autonomous,
            model, version, claim
     FROM turns WHERE id = $1`,
    [turnId],
  );
  const turn = turns.rows[0];
  if (!turn) return undefined;
  const tasks = await db.query<TaskRow>(
    `SELECT id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status, failure, asked
     FROM tasks WHERE turn_id = $1 AND iteration = $2 ORDER BY position`,
    [turnId, turn.iterations],
  );
  return { turn, tasks: tasks.rows };
}
