import { answerContinue, decideApproval, type ControlOutcome, type Queryable, type Runtime } from '@assistant/shared';
import type { ChannelDecision } from './buttons';

/** Applies an answer from a chat exactly as the HTTP routes do, then publishes the turn's outbox. */
export async function applyDecision(runtime: Runtime, userId: string, decision: ChannelDecision): Promise<ControlOutcome> {
  if (decision.kind === 'approval') {
    const { outcome, turnId } = await decideApproval(
      runtime.db,
      { userId, approvalId: decision.approvalId, decision: decision.approve ? 'approve' : 'reject' },
      runtime.config.MAX_ACTIVE_TURNS_PER_USER,
    );
    if (turnId) await runtime.outbox.flush(turnId);
    return outcome;
  }
  const outcome = await answerContinue(
    runtime.db,
    { userId, turnId: decision.turnId, proceed: decision.proceed },
    runtime.config.MAX_ACTIVE_TURNS_PER_USER,
  );
  if (outcome === 'ok') await runtime.outbox.flush(decision.turnId);
  return outcome;
}

/**
 * What a plain yes/no answers: the user's only open question (a pending approval or a turn
 * waiting for "continue?"). With none, or more than one, it is an ordinary message.
 */
export async function openQuestionDecision(db: Queryable, userId: string, yes: boolean): Promise<ChannelDecision | undefined> {
  const open = await db.query<{ kind: 'approval' | 'continue'; id: string }>(
    `(SELECT 'approval' AS kind, id FROM approvals WHERE user_id = $1 AND status = 'pending' AND expires_at > NOW() LIMIT 2)
     UNION ALL
     (SELECT 'continue' AS kind, id FROM turns WHERE user_id = $1 AND status = 'awaiting_user' LIMIT 2)`,
    [userId],
  );
  const [only, other] = open.rows;
  if (!only || other) return undefined;
  return only.kind === 'approval'
    ? { kind: 'approval', approvalId: only.id, approve: yes }
    : { kind: 'continue', turnId: only.id, proceed: yes };
}
