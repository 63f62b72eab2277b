import type { Db, DbClient } from '../db';
import { jobId } from '../queues';
import { outboxJob, type OutboxEntry, type OutboxPublisher } from './outbox';
import type { LaneSettings } from './starting';
import type { TurnState } from './turn-state';

/**
 * The turn state machine (docs/architecture.md "Where is …"): this folder is the only code that
 * writes `turns`. Every transition changes the row under a guard (the turn's `version`, its
 * claim, or a row lock), bumps `version` so a concurrent step notices, and queues what it owes
 * (events, jobs) in the row's outbox in the same transaction; see outbox.ts for publishing.
 *
 * - starting.ts: a message becomes a turn (or joins a queued one); a lane starts its next turn
 * - model-steps.ts: claiming the model call, recording its tool calls or its answer, the iteration limit
 * - dispatch.ts: a task goes to the tool worker
 * - approvals.ts: waiting for and deciding approvals
 * - continue-and-cancel.ts: asking whether to go on after a failure, the answer, cancelling
 * - resuming.ts: a parked turn the user answered runs again, once its user has a free slot
 * - expiry.ts: an approval nobody answered in time
 * - finishing.ts: how every turn ends, and giving up on one
 */

/** What the agent's transitions need: the database, the outbox publisher and the limits in force. */
export interface TurnMachine extends LaneSettings {
  db: Db;
  outbox: OutboxPublisher;
  approvalTtlSeconds: number;
  maxToolCallsPerStep: number;
}

export type ControlOutcome = 'ok' | 'not_found' | 'conflict';

export interface LockedTurn {
  id: string;
  session_id: string;
  user_id: string;
  status: string;
  version: number;
}

/** Locks the turn row for a transition from outside the agent loop (a user's decision, expiry, giving up). */
export async function lockTurn(client: DbClient, turnId: string, userId?: string): Promise<LockedTurn | undefined> {
  const found = await client.query<LockedTurn>(
    `SELECT id, session_id, user_id, status, version FROM turns WHERE id = $1 ${userId ? 'AND user_id = $2' : ''} FOR UPDATE`,
    userId ? [turnId, userId] : [turnId],
  );
  return found.rows[0];
}

/** Bumps the locked turn's version (and sets its status), queueing its entries in the same statement. */
export async function bumpVersion(client: DbClient, turnId: string, entries: OutboxEntry[], status?: string): Promise<void> {
  await client.query(`UPDATE turns SET version = version + 1, outbox = outbox || $2::jsonb, status = COALESCE($3, status) WHERE id = $1`, [
    turnId,
    JSON.stringify(entries),
    status ?? null,
  ]);
}

/** Records a tool message for a task that will not run, so the model is told what happened. */
export async function recordToolMessage(client: DbClient, turn: LockedTurn, callId: string, content: string): Promise<void> {
  await client.query(`INSERT INTO messages (session_id, turn_id, role, content, tool_call_id) VALUES ($1, $2, 'tool', $3, $4)`, [
    turn.session_id,
    turn.id,
    content,
    callId,
  ]);
}

/**
 * Parks a running turn (waiting for an approval or for the user's answer) in one statement,
 * guarded by the version the agent read, then publishes what that owes. A parked turn holds no
 * slot of MAX_ACTIVE_TURNS_PER_USER, so the lane job it queues lets the user's other lanes start.
 */
export async function park(
  m: TurnMachine,
  state: TurnState,
  entries: OutboxEntry[],
  status: 'awaiting_approval' | 'awaiting_user',
): Promise<boolean> {
  const { turn } = state;
  const owed = [
    ...entries,
    outboxJob('agent-turns', 'lane', { sessionId: turn.session_id }, { jobId: jobId('park', `${turn.id}.${turn.version}`) }),
  ];
  const updated = await m.db.query(
    `UPDATE turns SET version = version + 1, status = $3, outbox = outbox || $4::jsonb
     WHERE id = $1 AND version = $2 AND status = 'running' AND claim IS NULL`,
    [turn.id, turn.version, status, JSON.stringify(owed)],
  );
  if (updated.rowCount !== 1) return false;
  await m.outbox.publish(turn.id, turn.origin, owed);
  return true;
}
