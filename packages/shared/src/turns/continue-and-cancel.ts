import type { Db, DbClient } from '../db';
import { withTransaction } from '../db';
import { outboxEvent } from './outbox';
import { finish, skipOpenTasks } from './finishing';
import { lockTurnAndLane, resume } from './resuming';
import { lockTurn, park, type ControlOutcome, type TurnMachine } from './turn-machine';
import type { TaskRow, TurnState } from './turn-state';
import { isFinal, NOT_FINISHED_SQL } from './turn-status';

/**
 * A task failed even after its retry (autonomous mode): the turn asks the user whether to go on,
 * naming what failed as the plan did (a chat shows the question as it is).
 */
export async function askUser(m: TurnMachine, state: TurnState, remaining: TaskRow[]): Promise<boolean> {
  const failed = state.tasks.filter((task) => task.failure === 'error' && !task.asked).map((task) => task.description);
  const rest = remaining.length === 1 ? 'the remaining task' : `the ${remaining.length} remaining tasks`;
  const question = outboxEvent({
    type: 'ask_user_continue',
    question: `${failed.join('; ')}: failed even after a retry. ${remaining.length > 0 ? `Continue with ${rest}?` : 'Continue?'}`,
    remaining_tasks: remaining.map((task) => task.ref),
  });
  return park(m, state, [question], 'awaiting_user');
}

/**
 * Answers `ask_user_continue`: go on with the remaining tasks (resume, within the user's
 * MAX_ACTIVE_TURNS_PER_USER), or skip them and end the turn.
 */
export async function answerContinue(
  db: Db,
  input: { userId: string; turnId: string; proceed: boolean },
  maxActiveTurnsPerUser: number,
): Promise<ControlOutcome> {
  return withTransaction(db, async (client) => {
    const turn = await lockTurnAndLane(client, input.turnId, input.userId);
    if (!turn) return 'not_found';
    if (turn.status !== 'awaiting_user') return 'conflict';
    await client.query(`UPDATE tasks SET asked = true WHERE turn_id = $1 AND failure = 'error'`, [turn.id]);
    if (input.proceed) {
      await resume(client, turn, [], 'awaiting_user', maxActiveTurnsPerUser);
      return 'ok';
    }
    const skipped = await skipOpenTasks(client, turn, 'The user chose to stop; this was not done.');
    const content = 'Stopped as you asked; the remaining tasks were skipped.';
    await client.query(`INSERT INTO messages (session_id, turn_id, role, content) VALUES ($1, $2, 'assistant', $3)`, [
      turn.session_id,
      turn.id,
      content,
    ]);
    // Streamed like a model's answer, so a client that shows the tokens shows it too.
    const answer = [outboxEvent({ type: 'token', delta: content }), outboxEvent({ type: 'message', role: 'assistant', content })];
    await finish(client, turn, 'completed', [...skipped, ...answer]);
    return 'ok';
  });
}

/** Cancels a turn at any point: open tasks are skipped and the turn ends `cancelled`. */
export async function cancelTurn(db: Db, input: { userId: string; turnId: string }): Promise<ControlOutcome> {
  return withTransaction(db, (client) => cancelTurnIn(client, input.turnId, { userId: input.userId }));
}

/**
 * cancelTurn inside the caller's transaction (an interrupting message cancels and queues at once).
 * The turn ends here and frees its lane, but a tool already started finishes and records its
 * result: its events come after the skipped tasks', and the `advance` its end queues sends the
 * turn's `done` (turn.worker.ts), so the stream closes with every task settled.
 *
 * A running turn's messages went into the conversation when it started, and stay. Those of a
 * turn that never started go in now only when an interruption cancels it (`keepMessages`): the
 * interrupting turn reads them, and no turn of the session is left running to read them in the
 * middle of its work. A queued turn cancelled on its own is a message withdrawn: the turn running
 * ahead of it never sees it.
 */
export async function cancelTurnIn(
  client: DbClient,
  turnId: string,
  { userId, keepMessages = false }: { userId?: string; keepMessages?: boolean } = {},
): Promise<ControlOutcome> {
  const turn = await lockTurn(client, turnId, userId);
  if (!turn) return 'not_found';
  if (isFinal(turn.status)) return 'conflict';
  if (turn.status === 'queued' && keepMessages) {
    await client.query(
      `INSERT INTO messages (session_id, turn_id, role, content)
       SELECT t.session_id, t.id, 'user', m.text FROM turns t, unnest(ARRAY[t.input] || t.merged_inputs) WITH ORDINALITY AS m(text, n)
       WHERE t.id = $1 AND t.started_at IS NULL ORDER BY m.n`,
      [turn.id],
    );
  }
  const skipped = await skipOpenTasks(client, turn, 'The turn was cancelled; this was not done.');
  const running = await client.query(`SELECT 1 FROM tasks WHERE turn_id = $1 AND status = 'in_progress' LIMIT 1`, [turn.id]);
  await finish(client, turn, 'cancelled', skipped, { done: running.rowCount === 0 });
  return 'ok';
}

/**
 * Erasure: every open turn of the user ends `cancelled` at once, with nothing left to publish, so
 * no transition follows (the machine only advances open turns) and no event outlives the user.
 */
export async function cancelUserTurns(db: Db, userId: string): Promise<void> {
  await db.query(
    `UPDATE turns SET status = 'cancelled', finished_at = COALESCE(finished_at, NOW()), claim = NULL,
       outbox = '[]'::jsonb, version = version + 1
     WHERE user_id = $1 AND ${NOT_FINISHED_SQL}`,
    [userId],
  );
}

/** Erasure: deletes the user's turns, `batch` rows per statement so no transaction grows with their history. */
export async function deleteUserTurns(db: Db, userId: string, batch: number): Promise<void> {
  for (;;) {
    const deleted = await db.query('DELETE FROM turns WHERE id IN (SELECT id FROM turns WHERE user_id = $1 LIMIT $2)', [userId, batch]);
    if ((deleted.rowCount ?? 0) < batch) return;
  }
}
