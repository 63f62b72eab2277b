import type { Db, DbClient } from '../db';
import { withTransaction } from '../db';
import { jobId } from '../queues';
import { fail } from '../tools/tool-result';
import { appendOutbox, outboxEvent, outboxJob, type OutboxEntry } from './outbox';
import { isFinal, type FinalStatus } from './turn-status';

/**
 * Transitions of a turn that come from outside the agent loop: the user's decisions (approve,
 * reject, continue, cancel), expiry, and giving up on a turn. Each locks the turn row, changes
 * state, bumps `version` (so a concurrent agent step notices) and queues its events and jobs in
 * the outbox. The caller then flushes the outbox.
 */

export type ControlOutcome = 'ok' | 'not_found' | 'conflict';

interface LockedTurn {
  id: string;
  session_id: string;
  status: string;
}

async function lockTurn(client: DbClient, turnId: string, userId?: string): Promise<LockedTurn | undefined> {
  const found = await client.query<LockedTurn>(
    `SELECT id, session_id, status FROM turns WHERE id = $1 ${userId ? 'AND user_id = $2' : ''} FOR UPDATE`,
    userId ? [turnId, userId] : [turnId],
  );
  return found.rows[0];
}

async function bumpVersion(client: DbClient, turnId: string, status?: string): Promise<void> {
  await client.query(
    `UPDATE turns SET version = version + 1 ${status ? ', status = $2' : ''} WHERE id = $1`,
    status ? [turnId, status] : [turnId],
  );
}

/** Records a tool message for a task that will not run, so the model is told what happened. */
async function recordToolMessage(client: DbClient, turn: LockedTurn, callId: string, content: string): Promise<void> {
  await client.query(
    `INSERT INTO messages (session_id, turn_id, role, content, tool_call_id) VALUES ($1, $2, 'tool', $3, $4)`,
    [turn.session_id, turn.id, content, callId],
  );
}

/** Marks the turn's not-yet-run tasks skipped, telling the model why. */
async function skipOpenTasks(client: DbClient, turn: LockedTurn, reason: string): Promise<OutboxEntry[]> {
  const skipped = await client.query<{ ref: string; call_id: string; position: number }>(
    `UPDATE tasks SET status = 'skipped', finished_at = NOW()
     WHERE turn_id = $1 AND status IN ('pending', 'awaiting_approval', 'approved')
     RETURNING ref, call_id, position`,
    [turn.id],
  );
  await client.query(
    `UPDATE approvals SET status = 'expired', decided_at = NOW() WHERE turn_id = $1 AND status = 'pending'`,
    [turn.id],
  );
  const content = JSON.stringify(fail(reason, 'Do not retry this unless the user asks again.'));
  const rows = skipped.rows.sort((a, b) => a.position - b.position);
  for (const task of rows) await recordToolMessage(client, turn, task.call_id, content);
  return rows.map((task) => outboxEvent({ type: 'task_update', task_id: task.ref, status: 'skipped' }));
}

/** The entries that end a turn: its final events, then the job that starts the session's next turn. */
// The lane job's id names the finished turn ('after.<id>'), unlike the one queued at submission
// ('lane.<id>'): BullMQ would silently drop a second job with the same id.
export function finishEntries(turnId: string, sessionId: string, status: FinalStatus): OutboxEntry[] {
  return [
    outboxEvent({ type: 'done', status }),
    outboxJob('agent-turns', 'lane', { sessionId }, { jobId: jobId('after', turnId) }),
  ];
}

async function finish(
  client: DbClient,
  turn: LockedTurn,
  status: FinalStatus,
  before: OutboxEntry[],
  error?: string,
): Promise<void> {
  await client.query(
    `UPDATE turns SET status = $2, finished_at = NOW(), claim = NULL, error = $3, version = version + 1 WHERE id = $1`,
    [turn.id, status, error ?? null],
  );
  await appendOutbox(client, turn.id, [...before, ...finishEntries(turn.id, turn.session_id, status)]);
}

function advanceJob(turnId: string): OutboxEntry {
  return outboxJob('agent-turns', 'advance', { turnId });
}

export interface ApprovalDecision {
  userId: string;
  approvalId: string;
  decision: 'approve' | 'reject';
}

export async function decideApproval(db: Db, input: ApprovalDecision): Promise<{ outcome: ControlOutcome; turnId?: string }> {
  return withTransaction(db, async (client) => {
    const found = await client.query<{ turn_id: string; task_id: string; status: string; expired: boolean }>(
      `SELECT turn_id, task_id, status, expires_at <= NOW() AS expired FROM approvals WHERE id = $1 AND user_id = $2`,
      [input.approvalId, input.userId],
    );
    const approval = found.rows[0];
    if (!approval) return { outcome: 'not_found' };
    const turn = await lockTurn(client, approval.turn_id);
    const current = await client.query<{ status: string }>('SELECT status FROM approvals WHERE id = $1', [input.approvalId]);
    if (!turn || current.rows[0]?.status !== 'pending' || isFinal(turn.status)) return { outcome: 'conflict' };
    if (approval.expired) {
      await expireLocked(client, turn, input.approvalId);
      return { outcome: 'conflict', turnId: turn.id };
    }

    const approved = input.decision === 'approve';
    await client.query(`UPDATE approvals SET status = $2, decided_at = NOW() WHERE id = $1`, [
      input.approvalId,
      approved ? 'approved' : 'rejected',
    ]);
    const task = await client.query<{ ref: string; call_id: string }>(
      `UPDATE tasks SET status = $2, finished_at = CASE WHEN $2 = 'skipped' THEN NOW() END
       WHERE id = $1 RETURNING ref, call_id`,
      [approval.task_id, approved ? 'approved' : 'skipped'],
    );
    const { ref, call_id: callId } = task.rows[0] as { ref: string; call_id: string };
    const entries: OutboxEntry[] = [
      outboxEvent({ type: approved ? 'tool_approved' : 'tool_rejected', approval_id: input.approvalId, task_id: ref }),
    ];
    if (!approved) {
      await recordToolMessage(
        client,
        turn,
        callId,
        JSON.stringify(fail('The user rejected this action; it was not done.', 'Tell the user it was not done; do not retry it.')),
      );
      entries.push(outboxEvent({ type: 'task_update', task_id: ref, status: 'skipped' }));
    }
    entries.push(advanceJob(turn.id));
    await bumpVersion(client, turn.id, turn.status === 'awaiting_approval' ? 'running' : undefined);
    await appendOutbox(client, turn.id, entries);
    return { outcome: 'ok', turnId: turn.id };
  });
}

async function expireLocked(client: DbClient, turn: LockedTurn, approvalId: string): Promise<void> {
  await client.query(`UPDATE approvals SET status = 'expired', decided_at = NOW() WHERE id = $1`, [approvalId]);
  const task = await client.query<{ ref: string; call_id: string }>(
    `UPDATE tasks SET status = 'skipped', finished_at = NOW()
     WHERE id = (SELECT task_id FROM approvals WHERE id = $1) AND status = 'awaiting_approval' RETURNING ref, call_id`,
    [approvalId],
  );
  const row = task.rows[0];
  if (!row) return;
  await recordToolMessage(
    client,
    turn,
    row.call_id,
    JSON.stringify(fail('Nobody approved this action in time; it was not done.', 'Tell the user it expired.')),
  );
  await bumpVersion(client, turn.id, turn.status === 'awaiting_approval' ? 'running' : undefined);
  await appendOutbox(client, turn.id, [
    outboxEvent({ type: 'task_update', task_id: row.ref, status: 'skipped' }),
    advanceJob(turn.id),
  ]);
}

/** Expires an approval whose TTL has passed; a decided one is left alone. */
export async function expireApproval(db: Db, approvalId: string): Promise<string | undefined> {
  return withTransaction(db, async (client) => {
    const found = await client.query<{ turn_id: string }>(
      `SELECT turn_id FROM approvals WHERE id = $1 AND status = 'pending' AND expires_at <= NOW()`,
      [approvalId],
    );
    const turnId = found.rows[0]?.turn_id;
    if (!turnId) return undefined;
    const turn = await lockTurn(client, turnId);
    if (!turn || isFinal(turn.status)) return undefined;
    await expireLocked(client, turn, approvalId);
    return turn.id;
  });
}

/** Answers `ask_user_continue`: go on with the remaining tasks, or skip them and end the turn. */
export async function answerContinue(
  db: Db,
  input: { userId: string; turnId: string; proceed: boolean },
): Promise<ControlOutcome> {
  return withTransaction(db, async (client) => {
    const turn = await lockTurn(client, input.turnId, input.userId);
    if (!turn) return 'not_found';
    if (turn.status !== 'awaiting_user') return 'conflict';
    await client.query(`UPDATE tasks SET asked = true WHERE turn_id = $1 AND failure = 'error'`, [turn.id]);
    if (input.proceed) {
      await bumpVersion(client, turn.id, 'running');
      await appendOutbox(client, turn.id, [advanceJob(turn.id)]);
      return 'ok';
    }
    const skipped = await skipOpenTasks(client, turn, 'The user chose to stop; this was not done.');
    const content = 'Stopped as you asked; the remaining tasks were skipped.';
    await client.query(
      `INSERT INTO messages (session_id, turn_id, role, content) VALUES ($1, $2, 'assistant', $3)`,
      [turn.session_id, turn.id, content],
    );
    await finish(client, turn, 'completed', [...skipped, outboxEvent({ type: 'message', role: 'assistant', content })]);
    return 'ok';
  });
}

/** Cancels a turn at any point: open tasks are skipped and the turn ends `cancelled`. */
export async function cancelTurn(db: Db, input: { userId: string; turnId: string }): Promise<ControlOutcome> {
  return withTransaction(db, (client) => cancelTurnIn(client, input.turnId, input.userId));
}

/**
 * cancelTurn inside the caller's transaction (an interrupting message cancels and queues at once).
 * A tool already started finishes and records its result; the turn takes no further step.
 */
export async function cancelTurnIn(client: DbClient, turnId: string, userId?: string): Promise<ControlOutcome> {
  const turn = await lockTurn(client, turnId, userId);
  if (!turn) return 'not_found';
  if (isFinal(turn.status)) return 'conflict';
  const skipped = await skipOpenTasks(client, turn, 'The turn was cancelled; this was not done.');
  await finish(client, turn, 'cancelled', skipped);
  return 'ok';
}

/** Gives up on a turn that cannot go on (a model that keeps failing, a job out of attempts). */
export async function failTurn(db: Db, turnId: string, code: string, message: string): Promise<boolean> {
  return withTransaction(db, async (client) => {
    const turn = await lockTurn(client, turnId);
    if (!turn || isFinal(turn.status)) return false;
    const skipped = await skipOpenTasks(client, turn, 'The turn failed before this could run.');
    await finish(client, turn, 'failed', [...skipped, outboxEvent({ type: 'error', code, message })], message);
    return true;
  });
}
