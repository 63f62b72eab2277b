import type { Queryable } from '@assistant/shared';

/** The ids that name a user's things in job payloads and Redis keys. */
export interface UserFootprint {
  userId: string;
  turnIds: Set<string>;
  sessionIds: Set<string>;
  taskIds: Set<string>;
  approvalIds: Set<string>;
  reminderIds: Set<string>;
  channelMessageIds: Set<string>;
}

export async function loadFootprint(db: Queryable, userId: string): Promise<UserFootprint> {
  const ids = async (sql: string) => new Set((await db.query<{ id: string }>(sql, [userId])).rows.map((row) => row.id));
  return {
    userId,
    turnIds: await ids('SELECT id FROM turns WHERE user_id = $1'),
    sessionIds: await ids('SELECT id FROM sessions WHERE user_id = $1'),
    taskIds: await ids('SELECT k.id FROM tasks k JOIN turns t ON t.id = k.turn_id WHERE t.user_id = $1'),
    approvalIds: await ids('SELECT id FROM approvals WHERE user_id = $1'),
    reminderIds: await ids('SELECT id FROM reminders WHERE user_id = $1'),
    channelMessageIds: await ids('SELECT id FROM channel_messages WHERE user_id = $1'),
  };
}

/** Whether a job's payload is about one of the user's things (every payload of jobs.ts names one). */
export function concernsUser(data: unknown, footprint: UserFootprint): boolean {
  if (data === null || typeof data !== 'object') return false;
  const fields = data as Record<string, unknown>;
  const has = (field: string, set: Set<string>) => typeof fields[field] === 'string' && set.has(fields[field]);
  return (
    fields.userId === footprint.userId ||
    has('turnId', footprint.turnIds) ||
    has('sessionId', footprint.sessionIds) ||
    has('taskId', footprint.taskIds) ||
    has('approvalId', footprint.approvalIds) ||
    has('reminderId', footprint.reminderIds) ||
    has('channelMessageId', footprint.channelMessageIds)
  );
}
