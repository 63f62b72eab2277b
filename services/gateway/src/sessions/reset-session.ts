import { addJob, jobId, type DbClient, type Queues } from '@assistant/shared';

/**
 * "Digest now, then archive" (`POST /v1/sessions/:key/reset`, `/new` in a chat: docs/memory.md#session-digests): queues
 * an immediate digest of the user's active session under `sessionKey`, archives it and opens a
 * fresh one under the same key. False when the key has no active session; true, doing nothing,
 * when it is fresh already (no turn, no message), so two resets at once (a double click, a
 * retry) both succeed and the session is digested and archived once: they take turns under a
 * lock of the key, and the second finds the first one's fresh session.
 *
 * Call inside a transaction (the lock is held until it ends). The digest is queued before the
 * archive: if Redis refuses it, nothing is archived and the caller can try again; if the
 * archive is then rolled back, a digest of a still-active session did no harm. A digest of an
 * archived session runs at once, whatever its reason, and the session's idle digest
 * (armed by its messages) is a second chance for the same messages.
 */
export async function resetSession(
  client: DbClient,
  queues: Pick<Queues, 'session-digests'>,
  userId: string,
  sessionKey: string,
): Promise<boolean> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`session-reset:${userId}:${sessionKey}`]);
  const found = await client.query<{ id: string; fresh: boolean }>(
    `SELECT s.id, NOT EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id)
         AND NOT EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id) AS fresh
     FROM sessions s WHERE s.user_id = $1 AND s.session_key = $2 AND s.archived_at IS NULL`,
    [userId, sessionKey],
  );
  const session = found.rows[0];
  if (!session) return false;
  if (session.fresh) return true;
  await addJob(
    queues,
    'session-digests',
    'digest',
    { sessionId: session.id, reason: 'reset' },
    { jobId: jobId('digest-reset', session.id) },
  );
  await client.query('UPDATE sessions SET archived_at = NOW() WHERE id = $1', [session.id]);
  // A fresh, empty session under the same key, at once (docs/api.md#sessions), not only on the next message.
  await client.query(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, $2) ON CONFLICT (user_id, session_key) WHERE archived_at IS NULL DO NOTHING`,
    [userId, sessionKey],
  );
  return true;
}
