import { createHash, randomBytes } from 'node:crypto';
import { DEFAULT_PROFILE, withTransaction, type Db, type DbClient, type Queryable } from '@assistant/shared';

export function hashApiKey(key: string): string {
  return createHash('sha256').update(key).digest('hex');
}

/** Creates a user with default preferences and profile; returns the API key, shown only now. */
export async function createUser(db: Db, displayName: string): Promise<{ id: string; api_key: string }> {
  return withTransaction(db, (client) => createUserIn(client, displayName));
}

export async function createUserIn(client: DbClient, displayName: string): Promise<{ id: string; api_key: string }> {
  const user = await client.query<{ id: string }>('INSERT INTO users (display_name) VALUES ($1) RETURNING id', [displayName]);
  const id = (user.rows[0] as { id: string }).id;
  await client.query('INSERT INTO user_preferences (user_id) VALUES ($1)', [id]);
  await client.query(
    `INSERT INTO agent_memory_profiles (user_id, agents_content, soul_content, identity_content, user_content, tools_content, memory_content)
     VALUES ($1, $2, $3, $4, $5, $6, $7)`,
    [id, DEFAULT_PROFILE.agents, DEFAULT_PROFILE.soul, DEFAULT_PROFILE.identity, DEFAULT_PROFILE.user, DEFAULT_PROFILE.tools, DEFAULT_PROFILE.memory],
  );
  const apiKey = `ak_${randomBytes(24).toString('base64url')}`;
  await client.query('INSERT INTO api_keys (user_id, key_hash) VALUES ($1, $2)', [id, hashApiKey(apiKey)]);
  return { id, api_key: apiKey };
}

export async function userIdForApiKey(db: Queryable, apiKey: string): Promise<string | undefined> {
  const found = await db.query<{ user_id: string }>(
    'SELECT user_id FROM api_keys WHERE key_hash = $1 AND revoked_at IS NULL',
    [hashApiKey(apiKey)],
  );
  return found.rows[0]?.user_id;
}
