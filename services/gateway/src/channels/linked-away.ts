import { appendMemory, loadProfile, markErasing, NOT_FINISHED_SQL, type DbClient } from '@assistant/shared';

/** What a person keeps when `/link` moves their chat to another user: the things they made, not the chat's history. */
const MOVED_TABLES = ['folders', 'documents', 'habits', 'reminders', 'goals'] as const;

/**
 * `/link CODE` from a chat that already had a user of its own (docs/channels.md#identities-and-linking).
 * A user a chat created is reachable only through that chat (its API key was never shown), so
 * once the chat is linked away nobody could read, export or erase what it holds. When that is
 * so (no chat identity left, no key ever used, no turn open, not disabled), its folders, documents, habits, reminders and
 * goals move to the linked user, its MEMORY is added to theirs, and the rest (conversations,
 * turns, usage) is erased: marked here, in the link's transaction; the caller queues the job once
 * it commits. Answers whether anything moved. A user still reachable otherwise is left as it is.
 */
export async function adoptLinkedAway(client: DbClient, from: string, to: string): Promise<{ erased: boolean; moved: boolean }> {
  // Left as it is too: one with a turn still open (a message sent just before /link: erasing now
  // would drop its answer) and one the operator disabled (only an admin erases it).
  const kept = await client.query(
    `SELECT 1 FROM channel_identities WHERE user_id = $1
     UNION ALL SELECT 1 FROM api_keys WHERE user_id = $1 AND last_used_at IS NOT NULL
     UNION ALL SELECT 1 FROM turns WHERE user_id = $1 AND ${NOT_FINISHED_SQL}
     UNION ALL SELECT 1 FROM users WHERE id = $1 AND disabled_at IS NOT NULL LIMIT 1`,
    [from],
  );
  if (from === to || kept.rowCount !== 0) return { erased: false, moved: false };
  let moved = false;
  for (const table of MOVED_TABLES) {
    const updated = await client.query(`UPDATE ${table} SET user_id = $2 WHERE user_id = $1`, [from, to]);
    moved ||= (updated.rowCount ?? 0) > 0;
  }
  const { memory } = await loadProfile(client, from);
  if (memory.trim() !== '') {
    await appendMemory(client, to, memory.trim());
    moved = true;
  }
  return { erased: await markErasing(client, from), moved };
}
