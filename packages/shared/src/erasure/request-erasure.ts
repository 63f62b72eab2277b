import { createHash } from 'node:crypto';
import type { Queryable } from '../db';
import { withTransaction } from '../db';
import { addJob, jobId, type Queues } from '../queues';
import { linkAttemptsOf, userKeys } from '../redis';
import type { Runtime } from '../runtime';

/**
 * The first moment of an erasure, in one transaction: the user is marked `erasing_at` (their
 * keys are refused from now on, see the gateway's auth), every key is revoked, and their
 * channel identities and link codes go, so a later message from one of their chats starts a new
 * user. Idempotent; answers false when there is no such user (already erased).
 */
export async function markErasing(db: Queryable, userId: string): Promise<boolean> {
  const marked = await db.query('UPDATE users SET erasing_at = COALESCE(erasing_at, NOW()) WHERE id = $1', [userId]);
  if (marked.rowCount !== 1) return false;
  await db.query('UPDATE api_keys SET revoked_at = COALESCE(revoked_at, NOW()) WHERE user_id = $1', [userId]);
  // What was sent to their private chats names their chat id, phone number or BSUID: it goes with them.
  // An identity known by its BSUID before its number showed may have answers recorded under either.
  // Their addresses as rows, so each is found through idx_deliveries_recipient (an OR in the join reads the whole table).
  await db.query(
    `DELETE FROM deliveries WHERE (channel, recipient) IN (
       SELECT channel, external_id FROM channel_identities WHERE user_id = $1
       UNION ALL SELECT channel, bsuid FROM channel_identities WHERE user_id = $1 AND bsuid IS NOT NULL)`,
    [userId],
  );
  await db.query('DELETE FROM channel_identities WHERE user_id = $1', [userId]);
  await db.query('DELETE FROM link_codes WHERE user_id = $1', [userId]);
  return true;
}

/**
 * The one erasure job of a user: asking twice, or re-queuing after a crash, adds it once. Named by
 * a digest of the user id, not the id itself: BullMQ writes every job's id into its queue's event
 * stream (`<prefix>:session-digests:events`), which outlives the job and the user.
 */
export function eraseUserJobId(userId: string): string {
  return jobId('erase', createHash('sha256').update(userId).digest('hex'));
}

/**
 * Queues the user's erasure job (id `erase.<user id>`): a second request adds nothing, and one
 * whose job failed for good runs it again.
 */
export async function enqueueErasure(queues: Queues, userId: string): Promise<void> {
  const queue = queues['session-digests'];
  const id = eraseUserJobId(userId);
  const existing = await queue.getJob(id);
  if (existing && (await existing.isFailed())) {
    await existing.retry('failed');
    return;
  }
  await addJob(queues, 'session-digests', 'erase-user', { userId }, { jobId: id });
}

/**
 * DELETE /v1/me and the admin's DELETE: mark, then queue the job that removes the rest. The
 * `/link` attempts of the user's chats are counted under the chats' ids (channels/link-codes.ts):
 * those windows go now, with the identities that name them, as the job no longer knows the chats.
 */
export async function requestErasure(runtime: Pick<Runtime, 'db' | 'queues' | 'redis' | 'config'>, userId: string): Promise<boolean> {
  const chats = await withTransaction(runtime.db, async (client) => {
    const identities = await client.query<{ channel: string; id: string }>(
      `SELECT channel, external_id AS id FROM channel_identities WHERE user_id = $1
       UNION ALL SELECT channel, bsuid FROM channel_identities WHERE user_id = $1 AND bsuid IS NOT NULL`,
      [userId],
    );
    return (await markErasing(client, userId)) ? identities.rows : undefined;
  });
  if (!chats) return false;
  const windows = chats.map((chat) =>
    userKeys.rateLimit(runtime.config.QUEUE_PREFIX, 'link-attempts', linkAttemptsOf(chat.channel, chat.id)),
  );
  if (windows.length > 0) await runtime.redis.del(...windows);
  await enqueueErasure(runtime.queues, userId);
  return true;
}
