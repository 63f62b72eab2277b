import type { Db, DbClient } from '../db';
import { withTransaction } from '../db';
import { fail } from '../tools/tool-result';
import { outboxEvent } from './outbox';
import { lockTurnAndLane, resume } from './resuming';
import { recordToolMessage, type LockedTurn } from './turn-machine';
import { isFinal } from './turn-status';

/**
 * Skips the task of an approval nobody answered in time; the turn goes on without it (resume).
 * The caller holds the turn and its lane's locks (lockTurnAndLane).
 */
export async function expireLocked(client: DbClient, turn: LockedTurn, approvalId: string, maxActiveTurnsPerUser: number): Promise<void> {
  // Expired when its TTL ran out, whenever this runs: as GET /v1/approvals showed it meanwhile.
  await client.query(`UPDATE approvals SET status = 'expired', decided_at = expires_at WHERE id = $1`, [approvalId]);
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
  const skipped = outboxEvent({ type: 'task_update', task_id: row.ref, status: 'skipped' });
  await resume(client, turn, [skipped], 'awaiting_approval', maxActiveTurnsPerUser);
}

/** Expires an approval whose TTL has passed (its delayed job); a decided one is left alone. */
export async function expireApproval(db: Db, approvalId: string, maxActiveTurnsPerUser: number): Promise<string | undefined> {
  return withTransaction(db, async (client) => {
    const found = await client.query<{ turn_id: string }>(
      `SELECT turn_id FROM approvals WHERE id = $1 AND status = 'pending' AND expires_at <= NOW()`,
      [approvalId],
    );
    const turnId = found.rows[0]?.turn_id;
    if (!turnId) return undefined;
    const turn = await lockTurnAndLane(client, turnId);
    if (!turn || isFinal(turn.status)) return undefined;
    await expireLocked(client, turn, approvalId, maxActiveTurnsPerUser);
    return turn.id;
  });
}
