import { addJob, jobId, type Queryable, type Queues } from '@assistant/shared';

/**
 * "Digest now, then archive" (`POST /v1/sessions/:key/reset`, `/new` in a chat: docs/memory.md#session-digests): queues
 * an immediate digest of the user's active session under `sessionKey`, archives it and opens a
 * fresh one under the same key. False when the key has no active session. Two resets at once
 * both succeed, and the session is digested and archived once.
 *
 * `db` may be the pool or a client inside the caller's transaction. The digest is queued before
 * the archive: if Redis refuses it, nothing is archived and the caller can try again; if the
 * archive is then rolled back, a digest of a still-active session did no harm. A digest of an
 * archived session runs at once, whatever its reason, and the session's idle digest
 * (armed by its messages) is a second chance for the same messages.
 */
export async function resetSession(
  db: Queryable,
  queues: Pick<Queues, 'session-digests'>,
  userId: string,
  sessionKey: string,
): Promise<boolean> {
  const found = await db.query<{ id: string }>('SELECT id FROM sessions WHERE user_id = $1 AND session_key = $2 AND archived_at IS NULL', [
    userId,
    sessionKey,
  ]);
  const sessionId = found.rows[0]?.id;
  if (!sessionId) return false;
  await addJob(queues, 'session-digests', 'digest', { sessionId, reason: 'reset' }, { jobId: jobId('digest-reset', sessionId) });
  const archived = await db.query('UPDATE sessions SET archived_at = NOW() WHERE id = $1 AND archived_at IS NULL', [sessionId]);
  // Another reset archived it meanwhile (a double click, a retry): that one opens the fresh session.
  if (archived.rowCount === 0) return true;
  // A fresh, empty session under the same key, at once (docs/api.md#sessions), not only on the next message.
  await db.query(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, $2) ON CONFLICT (user_id, session_key) WHERE archived_at IS NULL DO NOTHING`,
    [userId, sessionKey],
  );
  return true;
}
