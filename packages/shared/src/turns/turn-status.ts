export const TURN_STATUSES = [
  'queued',
  'running',
  'awaiting_approval',
  'awaiting_user',
  'completed',
  'limit_reached',
  'failed',
  'cancelled',
] as const;
export type TurnStatus = (typeof TURN_STATUSES)[number];

export const FINAL_STATUSES = ['completed', 'limit_reached', 'failed', 'cancelled'] as const;
export type FinalStatus = (typeof FINAL_STATUSES)[number];

/**
 * SQL condition: the turn has not finished. Written out rather than passed as a parameter, and
 * as the partial index idx_turns_lane states it, so a prepared statement's generic plan can use
 * that index (with the list as a parameter PostgreSQL planned such a statement on every call).
 */
export const NOT_FINISHED_SQL = `status NOT IN (${FINAL_STATUSES.map((status) => `'${status}'`).join(', ')})`;

/** A session runs one of these at a time; later turns wait in `queued`. */
export const ACTIVE_STATUSES = ['running', 'awaiting_approval', 'awaiting_user'] as const;

export function isFinal(status: string): status is FinalStatus {
  return (FINAL_STATUSES as readonly string[]).includes(status);
}

export type TaskStatus = 'pending' | 'awaiting_approval' | 'approved' | 'in_progress' | 'completed' | 'failed' | 'skipped';
