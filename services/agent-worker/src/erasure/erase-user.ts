import type { Job } from 'bullmq';
import {
  cancelUserTurns,
  channelAddressSchema,
  deleteUserTurns,
  eventKeys,
  markErasing,
  USER_RATE_LIMITS,
  userKeys,
  type Runtime,
} from '@assistant/shared';
import { removeUserJobs, type JobRef } from './remove-user-jobs';
import { loadFootprint, type UserFootprint } from './user-footprint';

export type ErasureDeps = Pick<Runtime, 'db' | 'queues' | 'redis' | 'config' | 'logger' | 'typing'>;

/** Rows deleted per statement, so no single transaction grows with the user's history. */
const BATCH = 5_000;
const FOREIGN_KEY_VIOLATION = '23503';

/**
 * Erases a user (DELETE /v1/me, docs/api.md#operators). Every step is idempotent and reads what is left
 * from PostgreSQL, so a job killed half-way is simply run again (BullMQ stalled-job recovery,
 * or its retry) and finishes the work. The user row goes last: until then the user's turn ids
 * are still known, and afterwards nothing can be written for them (every table with a user id
 * references users, ON DELETE CASCADE). Answers the jobs about the user that were running (none
 * when the user was gone already).
 */
export async function eraseUser(deps: ErasureDeps, userId: string, jobId?: string): Promise<JobRef[]> {
  const { db } = deps;
  if (!(await markErasing(db, userId))) return [];

  await cancelUserTurns(db, userId);
  const footprint = await loadFootprint(db, userId);
  const { removed: removedJobs, running } = await removeUserJobs(deps.queues, footprint, jobId);
  await leaveDeliveryLines(deps, removedJobs);
  await deleteRedisKeys(deps, footprint);

  const sessions = [...footprint.sessionIds];
  await deleteInBatches(deps, 'DELETE FROM messages WHERE id IN (SELECT id FROM messages WHERE session_id = ANY($1) LIMIT $2)', sessions);
  await deleteUserTurns(db, userId, BATCH);
  await deleteOwnedRows(deps, userId);
  await db.query('DELETE FROM users WHERE id = $1', [userId]);
  // A model call that was streaming when the turns were cancelled may have written a token event since.
  await deleteRedisKeys(deps, footprint);
  deps.logger.info({ userId, turns: footprint.turnIds.size, removedJobs: removedJobs.length, running: running.length }, 'user erased');
  return running;
}

async function deleteInBatches(deps: ErasureDeps, sql: string, key: unknown): Promise<void> {
  for (;;) {
    const deleted = await deps.db.query(sql, [key, BATCH]);
    if ((deleted.rowCount ?? 0) < BATCH) return;
  }
}

/**
 * Every other table with a `user_id` column, found in the catalogue rather than listed, so a
 * table added later is erased too even if its foreign key does not cascade. A delete refused
 * by a foreign key (a row another table still points at) is tried again after the others.
 */
async function deleteOwnedRows(deps: ErasureDeps, userId: string): Promise<void> {
  const found = await deps.db.query<{ table_name: string }>(
    `SELECT c.table_name FROM information_schema.columns c
     JOIN information_schema.tables t ON t.table_schema = c.table_schema AND t.table_name = c.table_name
     WHERE c.table_schema = current_schema() AND c.column_name = 'user_id' AND t.table_type = 'BASE TABLE' AND c.table_name <> 'users'`,
  );
  let pending = found.rows.map((row) => row.table_name);
  for (let pass = 0; pending.length > 0 && pass <= found.rows.length; pass++) {
    const refused: string[] = [];
    for (const table of pending) {
      await deps.db.query(`DELETE FROM "${table.replace(/"/g, '""')}" WHERE user_id = $1`, [userId]).catch((error: unknown) => {
        if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION) throw error;
        refused.push(table);
      });
    }
    pending = refused;
  }
}

/**
 * A removed delivery that waited (a 429, a retry) leaves its chat's line, whose key names the chat
 * (the gateway's channels/delivery-line.ts); a line left empty is gone with it.
 */
async function leaveDeliveryLines(deps: ErasureDeps, jobs: Job[]): Promise<void> {
  const pipeline = deps.redis.pipeline();
  for (const job of jobs) {
    const to = channelAddressSchema.safeParse((job.data as { to?: unknown } | null)?.to);
    if (job.queueName === 'deliveries' && to.success)
      pipeline.zrem(userKeys.deliveryLine(deps.config.QUEUE_PREFIX, to.data), job.id as string);
  }
  await pipeline.exec();
}

/** The turns' event streams (their bookkeeping left as a short-lived `done`), their chat typing beats, the user's rate-limit windows and SSE slots. */
async function deleteRedisKeys(deps: ErasureDeps, footprint: UserFootprint): Promise<void> {
  const prefix = deps.config.QUEUE_PREFIX;
  const turnIds = [...footprint.turnIds];
  const keys = turnIds.map((turnId) => eventKeys(prefix, turnId).stream);
  // A turn's bookkeeping becomes a bare `done` for as long as a step already under way may still
  // publish (a model call streaming its tokens, a tool call): the stream script drops what comes
  // after `done`, so nothing of the user's is written again. It names nobody, and expires.
  const tombstoneSeconds = Math.ceil(Math.max(deps.config.MODEL_TIMEOUT_MS, deps.config.TOOL_TIMEOUT_MS) / 1_000) + 60;
  for (let i = 0; i < turnIds.length; i += 500) {
    const batch = turnIds.slice(i, i + 500);
    const pipeline = deps.redis.multi();
    for (const turnId of batch) {
      const { meta } = eventKeys(prefix, turnId);
      pipeline.del(meta).hset(meta, 'done', 1).expire(meta, tombstoneSeconds);
    }
    await pipeline.exec();
    await deps.typing.stop(...batch);
  }
  keys.push(
    ...USER_RATE_LIMITS.map((name) => userKeys.rateLimit(prefix, name, footprint.userId)),
    userKeys.streamSlots(prefix, footprint.userId),
  );
  for (let i = 0; i < keys.length; i += 500) await deps.redis.del(...keys.slice(i, i + 500));
}
