import type { Db, DbClient } from '../db';
import { withTransaction } from '../db';
import { jobId } from '../queues';
import { fail } from '../tools/tool-result';
import { slotLock } from './lane-admission';
import { outboxEvent, outboxJob, type OutboxEntry } from './outbox';
import { lockTurn, recordToolMessage, type LockedTurn } from './turn-machine';
import { isFinal, type FinalStatus } from './turn-status';

/** The entries that end a turn: its final event, then the job that starts the session's next turn. */
function finishEntries(turnId: string, sessionId: string, status: FinalStatus, done: boolean): OutboxEntry[] {
  return [...(done ? [outboxEvent({ type: 'done', status })] : []), laneAfter(turnId, sessionId)];
}

// The lane job's id names the finished turn ('after.<id>'), unlike the one queued at submission
// ('lane.<id>'): BullMQ would silently drop a second job with the same id.
export function laneAfter(turnId: string, sessionId: string): OutboxEntry {
  return outboxJob('agent-turns', 'lane', { sessionId }, { jobId: jobId('after', turnId) });
}

/**
 * Takes the locks every lane change takes, in their order (the session row, then the user's
 * slot lock), held to the commit: the answer that ends a turn takes them first in its
 * transaction, then reads whether one of the user's turns is queued, and queues a lane job only
 * then. A turn queued meanwhile is either seen by that read, or queued after this turn ends and
 * starts on arrival without waiting for it.
 */
export async function lockLanes(client: DbClient, turn: { session_id: string; user_id: string }): Promise<void> {
  await client.query(`SELECT ${slotLock('$2')} FROM (SELECT id FROM sessions WHERE id = $1 FOR NO KEY UPDATE) AS session`, [
    turn.session_id,
    turn.user_id,
  ]);
}

/**
 * Ends a locked turn with `status`, after the entries that explain how it got there. `done:
 * false` leaves its `done` event to whoever sees its last running tool end (a cancel, below).
 */
export async function finish(
  client: DbClient,
  turn: LockedTurn,
  status: FinalStatus,
  before: OutboxEntry[],
  { error, done = true }: { error?: string; done?: boolean } = {},
): Promise<void> {
  await client.query(
    `UPDATE turns SET status = $2, finished_at = NOW(), claim = NULL, error = $3, version = version + 1,
       outbox = outbox || $4::jsonb
     WHERE id = $1`,
    [turn.id, status, error ?? null, JSON.stringify([...before, ...finishEntries(turn.id, turn.session_id, status, done)])],
  );
}

/** Marks the turn's not-yet-run tasks skipped, telling the model why. */
export async function skipOpenTasks(client: DbClient, turn: LockedTurn, reason: string): Promise<OutboxEntry[]> {
  const skipped = await client.query<{ ref: string; call_id: string; position: number }>(
    `UPDATE tasks SET status = 'skipped', finished_at = NOW()
     WHERE turn_id = $1 AND status IN ('pending', 'awaiting_approval', 'approved')
     RETURNING ref, call_id, position`,
    [turn.id],
  );
  await client.query(`UPDATE approvals SET status = 'expired', decided_at = NOW() WHERE turn_id = $1 AND status = 'pending'`, [turn.id]);
  const content = JSON.stringify(fail(reason, 'Do not retry this unless the user asks again.'));
  const rows = skipped.rows.sort((a, b) => a.position - b.position);
  for (const task of rows) await recordToolMessage(client, turn, task.call_id, content);
  return rows.map((task) => outboxEvent({ type: 'task_update', task_id: task.ref, status: 'skipped' }));
}

/** What the user is told of a turn given up on after its job kept failing. */
export const TURN_GAVE_UP = 'The assistant could not finish this turn after several attempts.';

/** Gives up on a turn that cannot go on (a model that keeps failing, a job out of attempts, a spent budget). */
export async function failTurn(db: Db, turnId: string, code: string, message: string): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const turn = await lockTurn(client, turnId);
    if (!turn || isFinal(turn.status)) return false;
    const skipped = await skipOpenTasks(client, turn, 'The turn failed before this could run.');
    await finish(client, turn, 'failed', [...skipped, outboxEvent({ type: 'error', code, message })], { error: message });
    return true;
  });
}
