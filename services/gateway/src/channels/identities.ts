import { directSessionKey, groupSessionKey, MAIN_SESSION_KEY, type ChannelAddress, type DbClient, type Queryable } from '@assistant/shared';
import { createUserIn } from '../users/users.service';
import { directAddress, type ChannelName, type InboundMessage } from './channel-types';
import { timeZoneForPhone } from './whatsapp/phone-time-zone';

/**
 * The user behind a channel identity; the first message of an unknown identity creates one.
 * Call inside the message's transaction: the lock serialises two first messages of one person.
 */
export async function identityUser(client: DbClient, message: InboundMessage, defaultTimeZone: string): Promise<string> {
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended($1, 0))', [`identity:${message.channel}:${message.sender.id}`]);
  const known = await knownIdentityUser(client, message);
  if (known) return known;
  // A WhatsApp id is the person's phone number, whose country tells their zone (docs/channels.md#time-zones).
  const timeZone = (message.channel === 'whatsapp' ? timeZoneForPhone(message.sender.id) : undefined) ?? defaultTimeZone;
  const user = await createUserIn(client, message.sender.name || `${message.channel} ${message.sender.id}`, timeZone);
  await client.query(`INSERT INTO channel_identities (channel, external_id, user_id) VALUES ($1, $2, $3)`, [
    message.channel,
    message.sender.id,
    user.id,
  ]);
  return user.id;
}

/** The user behind a channel identity seen before, if any; never creates one. */
export async function knownIdentityUser(client: DbClient, message: InboundMessage): Promise<string | undefined> {
  const known = await client.query<{ user_id: string }>(
    `UPDATE channel_identities SET last_seen_at = NOW() WHERE channel = $1 AND external_id = $2 RETURNING user_id`,
    [message.channel, message.sender.id],
  );
  return known.rows[0]?.user_id;
}

/** Points the identity at `userId` (`/link CODE`); a user it had been given before keeps its data. */
export async function linkIdentity(client: DbClient, message: InboundMessage, userId: string): Promise<void> {
  await client.query(
    `INSERT INTO channel_identities (channel, external_id, user_id) VALUES ($1, $2, $3)
     ON CONFLICT (channel, external_id) DO UPDATE SET user_id = EXCLUDED.user_id, last_seen_at = NOW()`,
    [message.channel, message.sender.id, userId],
  );
}

/** docs/channels.md#session-keys: groups have their own session; direct chats follow the user's dm_scope. */
export async function channelSessionKey(db: Queryable, userId: string, message: InboundMessage): Promise<string> {
  if (message.group !== undefined) return groupSessionKey(message.channel, message.group);
  const found = await db.query<{ dm_scope: string | null }>(
    `SELECT settings->>'dm_scope' AS dm_scope FROM user_preferences WHERE user_id = $1`,
    [userId],
  );
  return found.rows[0]?.dm_scope === 'per-channel' ? directSessionKey(message.channel, message.sender.id) : MAIN_SESSION_KEY;
}

/**
 * The direct chat of the identity the user wrote from most recently, among `preferred` (the
 * channels this gateway sends on), else among the others: a gateway without the user's channel
 * hands the delivery back for one that has it, as with any delivery. None while an admin has
 * disabled the user: a notice queued before that is not sent.
 */
export async function lastUsedAddress(db: Queryable, userId: string, preferred: ChannelName[]): Promise<ChannelAddress | undefined> {
  const found = await db.query<{ channel: ChannelName; external_id: string }>(
    `SELECT i.channel, i.external_id FROM channel_identities i JOIN users u ON u.id = i.user_id AND u.disabled_at IS NULL
     WHERE i.user_id = $1 ORDER BY i.channel = ANY($2) DESC, i.last_seen_at DESC LIMIT 1`,
    [userId, preferred],
  );
  const row = found.rows[0];
  return row ? directAddress(row.channel, row.external_id) : undefined;
}
