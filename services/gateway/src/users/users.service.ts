import { createHash, randomBytes } from 'node:crypto';
import { ensureProfile, withTransaction, type Db, type DbClient, type Queryable } from '@assistant/shared';

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

/** A disabled user's chat messages get a short reply instead of a turn (docs/api.md#operators). */
export async function isUserDisabled(db: Queryable, userId: string): Promise<boolean> {
  const found = await db.query('SELECT 1 FROM users WHERE id = $1 AND disabled_at IS NOT NULL', [userId]);
  return found.rowCount === 1;
}
