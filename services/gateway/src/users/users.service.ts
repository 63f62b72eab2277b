import { createHash, randomBytes } from 'node:crypto';
import { ensureProfile, tickBatched, withTransaction, type Db, type DbClient, type Queryable } from '@assistant/shared';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Creates a user with default preferences and profile; returns the API key, shown only now. */
export async function createUser(db: Db, displayName: string, timeZone: string): Promise<{ id: string; api_key: string }> {
  return withTransaction(db, (client) => createUserIn(client, displayName, timeZone));
}

export async function createUserIn(client: DbClient, displayName: string, timeZone: string): Promise<{ id: string; api_key: string }> {
  const user = await client.query<{ id: string }>('INSERT INTO users (display_name) VALUES ($1) RETURNING id', [displayName]);
  const id = (user.rows[0] as { id: string }).id;
  await client.query('INSERT INTO user_preferences (user_id, timezone) VALUES ($1, $2)', [id, timeZone]);
  await ensureProfile(client, id);
  const key = await issueApiKey(client, id, 'default');
  return { id, api_key: key.api_key };
}

/** Characters of a key shown in lists to tell keys apart: `ak_` and 6 of its random part, far too few to guess the rest. */
const PREFIX_LENGTH = 9;

/** A new key for the user; the secret is returned only now and stored as a SHA-256 hash. */
export async function issueApiKey(db: Queryable, userId: string, name: string): Promise<{ id: string; api_key: string }> {
  const apiKey = `ak_${randomBytes(24).toString('base64url')}`;
  const inserted = await db.query<{ id: string }>(
    'INSERT INTO api_keys (user_id, key_hash, name, prefix) VALUES ($1, $2, $3, $4) RETURNING id',
    [userId, hashApiKey(apiKey), name, apiKey.slice(0, PREFIX_LENGTH)],
  );
  return { id: (inserted.rows[0] as { id: string }).id, api_key: apiKey };
}

export interface KeyOwner {
  keyId: string;
  userId: string;
  disabled: boolean;
}

/**
 * The live keys' users, read from PostgreSQL on every request (no cache), so a revoked key, or
 * every key of a user being erased, stops working at once on every gateway. The requests of one
 * tick share the statement (tickBatched): a burst of messages costs a few reads, not one each.
 */
export function apiKeyOwners(db: Queryable): (apiKey: string) => Promise<KeyOwner | undefined> {
  const byHash = tickBatched(async (hashes: string[]) => {
    const found = await db.query<{ key_hash: string; key_id: string; user_id: string; disabled: boolean }>(
      `SELECT k.key_hash, k.id AS key_id, k.user_id, u.disabled_at IS NOT NULL AS disabled
       FROM api_keys k JOIN users u ON u.id = k.user_id
       WHERE k.key_hash = ANY($1::text[]) AND k.revoked_at IS NULL AND u.erasing_at IS NULL`,
      [hashes],
    );
    return new Map(found.rows.map((row) => [row.key_hash, { keyId: row.key_id, userId: row.user_id, disabled: row.disabled }]));
  });
  return (apiKey) => byHash(hashApiKey(apiKey));
}

/** A disabled user's chat messages get a short reply instead of a turn (docs/api.md#operators). */
export async function isUserDisabled(db: Queryable, userId: string): Promise<boolean> {
  const found = await db.query('SELECT 1 FROM users WHERE id = $1 AND disabled_at IS NOT NULL', [userId]);
  return found.rowCount === 1;
}
