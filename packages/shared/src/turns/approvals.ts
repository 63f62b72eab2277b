import type { Db } from '../db';
import { withTransaction } from '../db';
import { jobId } from '../queues';
import { stripUuids } from '../text';
import { fail } from '../tools/tool-result';
import { expireLocked } from './expiry';
import { outboxEvent, outboxJob, type OutboxEntry } from './outbox';
import { lockTurnAndLane, resume } from './resuming';
import { park, recordToolMessage, type ControlOutcome, type TurnMachine } from './turn-machine';
import type { TurnState } from './turn-state';
import { isFinal } from './turn-status';

/** The agent found only tasks waiting for approval: the turn waits for the user's decisions. */
export async function awaitApproval(m: TurnMachine, state: TurnState): Promise<boolean> {
  return park(m, state, [], 'awaiting_approval');
}

/** What the model planned that needs the user's approval first (manual mode): the approval, its event and its expiry. */
export function approvalEntries(
  m: TurnMachine,
  approvalId: string,
  task: { ref: string; name: string; args: Record<string, unknown> },
): OutboxEntry[] {
  return [
    outboxEvent({
      type: 'tool_approval_request',
      approval_id: approvalId,
      task_id: task.ref,
      tool_name: task.name,
      arguments: eventArguments(task.args),
    }),
    outboxJob(
      'agent-turns',
      'expire-approval',
      { approvalId },
      { jobId: jobId('expire', approvalId), delayMs: m.approvalTtlSeconds * 1_000 },
    ),
  ];
}

/** Arguments as events show them: refs and names as the model gave them, never a UUID. */
export function eventArguments(args: Record<string, unknown> | null | undefined): Record<string, unknown> {
  return JSON.parse(stripUuids(JSON.stringify(args ?? {}))) as Record<string, unknown>;
}

/** What an approval that can no longer be decided already is. */
export type DecidedStatus = 'approved' | 'rejected' | 'expired';

export interface ApprovalDecision {
  userId: string;
  approvalId: string;
  decision: 'approve' | 'reject';
}

/**
 * The user approves or rejects one task; an expired approval is expired instead. Either way the
 * turn goes on (resume), within the user's MAX_ACTIVE_TURNS_PER_USER.
 */
export async function decideApproval(
  db: Db,
  input: ApprovalDecision,
  maxActiveTurnsPerUser: number,
): Promise<{ outcome: ControlOutcome; turnId?: string; status?: DecidedStatus }> {
  return withTransaction(db, async (client) => {
    const found = await client.query<{ turn_id: string; task_id: string; expired: boolean }>(
      `SELECT turn_id, task_id, expires_at <= NOW() AS expired FROM approvals WHERE id = $1 AND user_id = $2`,
      [input.approvalId, input.userId],
    );
    const approval = found.rows[0];
    if (!approval) return { outcome: 'not_found' };
    const turn = await lockTurnAndLane(client, approval.turn_id);
    const current = await client.query<{ status: string }>('SELECT status FROM approvals WHERE id = $1', [input.approvalId]);
    const status = current.rows[0]?.status;
    if (status !== 'pending') return { outcome: 'conflict', status: status as DecidedStatus };
    // A pending approval of a finished turn can no longer run: it reads as expired.
    if (!turn || isFinal(turn.status)) return { outcome: 'conflict', status: 'expired' };
    if (approval.expired) {
      await expireLocked(client, turn, input.approvalId, maxActiveTurnsPerUser);
      return { outcome: 'conflict', turnId: turn.id, status: 'expired' };
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
    await resume(client, turn, entries, 'awaiting_approval', maxActiveTurnsPerUser);
    return { outcome: 'ok', turnId: turn.id };
  });
}
