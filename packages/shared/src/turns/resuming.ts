import type { DbClient } from '../db';
import { jobId } from '../queues';
import { lockLanes } from './finishing';
import { runningTurns } from './lane-admission';
import { outboxJob, type OutboxEntry } from './outbox';
import { bumpVersion, lockTurn, type LockedTurn } from './turn-machine';

/**
 * Locks a turn for an answer that may set it going again (a decision on one of its approvals,
 * an approval's expiry, the user's yes to go on): the lane's locks first, in the order every
 * lane change takes them (lockLanes), then the turn's row.
 */
export async function lockTurnAndLane(client: DbClient, turnId: string, userId?: string): Promise<LockedTurn | undefined> {
  const found = await client.query<{ session_id: string; user_id: string }>(
    `SELECT session_id, user_id FROM turns WHERE id = $1 ${userId ? 'AND user_id = $2' : ''}`,
    userId ? [turnId, userId] : [turnId],
  );
  const lane = found.rows[0];
  if (!lane) return undefined;
  await lockLanes(client, lane);
  return lockTurn(client, turnId, userId);
}

/**
 * Queues what an answer owes (its events) and the turn's next step. A turn parked for that answer
 * (`parkedAs`) runs again only if its user has a free slot of MAX_ACTIVE_TURNS_PER_USER;
 * otherwise it waits `queued` at the head of its lane, and the lane job that starts queued turns
 * resumes it once a slot frees (activateNext). A turn in any other state keeps it. The caller
 * holds the lane's locks (lockTurnAndLane).
 */
export async function resume(
  client: DbClient,
  turn: LockedTurn,
  entries: OutboxEntry[],
  parkedAs: 'awaiting_approval' | 'awaiting_user',
  maxActiveTurnsPerUser: number,
): Promise<void> {
  const advance = outboxJob('agent-turns', 'advance', { turnId: turn.id });
  // Already waiting for a slot: the lane job that resumes it will advance it.
  if (turn.status === 'queued') return bumpVersion(client, turn.id, entries);
  if (turn.status !== parkedAs) return bumpVersion(client, turn.id, [...entries, advance]);
  const free = await client.query<{ free: boolean }>(`SELECT ${runningTurns('$1')} < $2 AS free`, [turn.user_id, maxActiveTurnsPerUser]);
  if (free.rows[0]?.free) return bumpVersion(client, turn.id, [...entries, advance], 'running');
  const lane = outboxJob('agent-turns', 'lane', { sessionId: turn.session_id }, { jobId: jobId('resume', `${turn.id}.${turn.version}`) });
  return bumpVersion(client, turn.id, [...entries, lane], 'queued');
}
