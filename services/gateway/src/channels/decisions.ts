import {
  answerContinue,
  decideApproval,
  recipientOf,
  type ChannelAddress,
  type ControlOutcome,
  type Queryable,
  type Runtime,
} from '@assistant/shared';
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
 * What a plain yes/no answers: the first open question (a pending approval or a turn waiting for
 * "continue?") in the session the message goes to, or asked in the chat it comes from, so a "yes"
 * in a group never decides what was asked in a direct chat, and a "yes" in a direct chat answers
 * what was asked there even after the user's dm_scope changed (and with it the session the chat's
 * messages go to). A session has one waiting turn at most; the approvals of its step are answered
 * one per reply, in the order they were asked. With none, it is an ordinary message.
 */
export async function openQuestionDecision(
  db: Queryable,
  userId: string,
  where: { sessionKey: string; chat: ChannelAddress },
  yes: boolean,
): Promise<ChannelDecision | undefined> {
  const asked = `(t.session_key = $2 OR (t.origin->>'channel' = $3 AND COALESCE(t.origin->>'chat_id', t.origin->>'wa_id') = $4))`;
  const open = await db.query<{ kind: 'approval' | 'continue'; id: string }>(
    `(SELECT 'approval' AS kind, a.id FROM approvals a JOIN turns t ON t.id = a.turn_id JOIN tasks k ON k.id = a.task_id
      WHERE a.user_id = $1 AND a.status = 'pending' AND a.expires_at > NOW() AND ${asked}
      ORDER BY a.created_at, k.position LIMIT 1)
     UNION ALL
     (SELECT 'continue' AS kind, t.id FROM turns t WHERE t.user_id = $1 AND t.status = 'awaiting_user' AND ${asked}
      ORDER BY t.created_at LIMIT 1)`,
    [userId, where.sessionKey, where.chat.channel, recipientOf(where.chat)],
  );
  const [first] = open.rows;
  if (!first) return undefined;
  return first.kind === 'approval'
    ? { kind: 'approval', approvalId: first.id, approve: yes }
    : { kind: 'continue', turnId: first.id, proceed: yes };
}
