import {
  directSessionKey,
  groupSessionKey,
  MAIN_SESSION_KEY,
  type ChannelAddress,
  type Config,
  type DbClient,
  type Logger,
  type Queryable,
} from '@assistant/shared';
import { createUserIn } from '../users/users.service';
import { directAddress, type ChannelIds, type ChannelName, type InboundMessage } from './channel-types';
import { sessionGroupId } from './telegram/group-upgrades';
import { timeZoneForWhatsApp } from './whatsapp/phone-time-zone';

/** A person on a channel and the user they act as (docs/channels.md#identities-and-linking). */
export interface Identity {
  id: string;
  userId: string;
  /** Their chat's address: a Telegram user id, a WhatsApp number or, without one, a BSUID. */
  externalId: string;
  /** A WhatsApp user's business-scoped user id, once a message carried it. */
  bsuid: string | null;
  /** Created past NEW_CHAT_USERS_PER_MINUTE: its user's turns may not start for this long (admitChatUser). */
  admissionMs?: number;
}

interface IdentityRow {
  id: string;
  user_id: string;
  external_id: string;
  bsuid: string | null;
  admission_ms: number | null;
}

/** SQL: the columns of an identity row that make an Identity. */
const IDENTITY_COLUMNS = `id, user_id, external_id, bsuid,
  CASE WHEN admitted_at > NOW() THEN CEIL(EXTRACT(EPOCH FROM admitted_at - NOW()) * 1000)::int END AS admission_ms`;

const asIdentity = (row: IdentityRow): Identity => ({
  id: row.id,
  userId: row.user_id,
  externalId: row.external_id,
  bsuid: row.bsuid,
  ...(row.admission_ms !== null ? { admissionMs: row.admission_ms } : {}),
});

/**
 * The identity a message comes from, if known; never creates one. Call first in the message's
 * transaction: it locks every id the message names until the commit, so two first messages of one
 * person (one with their number, one without) make one identity, and a changed number and a first
 * message from the new number do not cross. A WhatsApp message is matched by its number or its
 * BSUID, the number first, in one query on the two unique indexes; one that carries both gives
 * them to its identity (docs/channels.md#whatsapp-usernames-and-changed-numbers), unless another
 * identity already has one of them: then both are left as they are.
 */
export async function findIdentity(client: DbClient, message: InboundMessage, logger: Logger): Promise<Identity | undefined> {
  await lockIds(client, message);
  const found = await client.query<IdentityRow>(
    `SELECT ${IDENTITY_COLUMNS} FROM channel_identities
     WHERE id = (SELECT id FROM channel_identities WHERE channel = $1 AND (external_id = $2 OR bsuid = $3)
                 ORDER BY external_id = $2 DESC LIMIT 1)
     FOR NO KEY UPDATE`,
    [message.channel, message.sender.id, message.sender.bsuid ?? null],
  );
  const row = found.rows[0];
  if (!row) return undefined;
  const identity = asIdentity(row);
  if (!givesNewIds(message, identity)) return identity;
  const moved = await readdressIdentity(client, message.channel, identity, message.sender);
  if (!moved) logger.info({ identityId: identity.id }, 'a WhatsApp number and BSUID belong to two identities: both left as they are');
  return moved ?? identity;
}

/**
 * The identity wrote just now: its chat becomes the user's last-used one (lastUsedAddress). Only
 * for a message seen for the first time: a redelivery of an older one must not take the notices
 * back from the chat the user has written from since.
 */
export async function markIdentitySeen(client: DbClient, identityId: string): Promise<void> {
  await client.query('UPDATE channel_identities SET last_seen_at = NOW() WHERE id = $1', [identityId]);
}

/** Locks each id the message names, a changed number's new ones too, until the transaction ends. */
async function lockIds(client: DbClient, message: InboundMessage): Promise<void> {
  const named = [message.sender, ...(message.content.kind === 'changed-number' ? [message.content.to] : [])];
  const ids = new Set(named.flatMap(({ id, bsuid }) => (bsuid === undefined ? [id] : [id, bsuid])));
  // Sorted, so two transactions that share ids take them in the same order and cannot deadlock.
  const keys = [...ids].map((id) => `identity:${message.channel}:${id}`).sort();
  await client.query('SELECT pg_advisory_xact_lock(hashtextextended(key, 0)) FROM unnest($1::text[]) AS key', [keys]);
}

/** Whether the message carries a number and a BSUID that its identity lacks. */
function givesNewIds(message: InboundMessage, identity: Identity): boolean {
  const { sender } = message;
  // A changed number's notice comes from the old ids: they are what it moves away from.
  if (message.content.kind === 'changed-number' || sender.bsuid === undefined || sender.bsuid === sender.id) return false;
  return identity.externalId !== sender.id || identity.bsuid !== sender.bsuid;
}

/**
 * Gives an identity a new address (a WhatsApp number, or a BSUID without one) and BSUID, under
 * findIdentity's locks. Undefined, changing nothing, when another identity has either: two users
 * are never merged. What was sent to the old address is recorded under the new one, since
 * erasure finds the user's deliveries by their identities' addresses.
 */
export async function readdressIdentity(
  client: DbClient,
  channel: ChannelName,
  identity: Identity,
  to: ChannelIds,
): Promise<Identity | undefined> {
  const updated = await client.query<IdentityRow>(
    `UPDATE channel_identities SET external_id = $3, bsuid = $4
     WHERE id = $1 AND NOT EXISTS (
       SELECT 1 FROM channel_identities other
       WHERE other.channel = $2 AND other.id <> $1 AND (other.external_id = $3 OR other.bsuid = $4))
     RETURNING ${IDENTITY_COLUMNS}`,
    [identity.id, channel, to.id, to.bsuid ?? null],
  );
  const row = updated.rows[0];
  if (!row) return undefined;
  if (to.id !== identity.externalId) {
    await client.query('UPDATE deliveries SET recipient = $3 WHERE channel = $1 AND recipient = $2', [channel, identity.externalId, to.id]);
  }
  return asIdentity(row);
}

/** The message as its identity's: one without the number of an identity that has it is answered at the number. */
export function fromIdentity(message: InboundMessage, identity: Identity): InboundMessage {
  if (identity.externalId === message.sender.id) return message;
  // Only a WhatsApp direct chat can differ: a Telegram identity's id is its chat's.
  return {
    ...message,
    sender: { ...message.sender, id: identity.externalId },
    replyTo: directAddress(message.channel, identity.externalId),
  };
}

/**
 * A new user for a message whose identity findIdentity did not find, in the same transaction,
 * admitted in its place among the chats' new users (admitChatUser).
 */
export async function createIdentityUser(
  client: DbClient,
  message: InboundMessage,
  config: Pick<Config, 'DEFAULT_TIMEZONE' | 'NEW_CHAT_USERS_PER_MINUTE'>,
): Promise<Pick<Identity, 'userId' | 'admissionMs'>> {
  const { sender } = message;
  // A WhatsApp id is a phone number or a BSUID, whose country tells the person's zone (docs/channels.md#time-zones).
  const timeZone = (message.channel === 'whatsapp' ? timeZoneForWhatsApp(sender.id) : undefined) ?? config.DEFAULT_TIMEZONE;
  const user = await createUserIn(client, sender.name || `${message.channel} ${sender.id}`, timeZone);
  const admittedAt = await admitChatUser(client, config.NEW_CHAT_USERS_PER_MINUTE);
  const created = await client.query<IdentityRow>(
    `INSERT INTO channel_identities (channel, external_id, bsuid, user_id, admitted_at) VALUES ($1, $2, $3, $4, $5)
     RETURNING ${IDENTITY_COLUMNS}`,
    [message.channel, sender.id, sender.bsuid ?? null, user.id, admittedAt],
  );
  const { userId, admissionMs } = asIdentity(created.rows[0] as IdentityRow);
  return { userId, ...(admissionMs !== undefined ? { admissionMs } : {}) };
}

/**
 * When a new chat user's turns may start (null: at once). Chat users are admitted at most
 * `perMinute` a minute across every gateway, a burst of `perMinute` at once (a token bucket whose
 * one row holds when its newest slot ends): a flood of new accounts each with a budget of its own
 * spends model tokens no faster than that many users. Past it the user is still created and its
 * messages stored; its turns wait for its slot. The row stays locked until the commit, so new
 * users are admitted one transaction at a time; established users never read it.
 */
async function admitChatUser(client: DbClient, perMinute: number): Promise<Date | null> {
  if (perMinute <= 0) return null;
  const slot = await client.query<{ admitted_at: Date | null }>(
    `WITH slot AS (
       INSERT INTO chat_user_admissions AS a (next_at) VALUES (NOW() - INTERVAL '1 minute' + make_interval(secs => 60.0 / $1::int))
       ON CONFLICT (singleton) DO UPDATE SET next_at = GREATEST(a.next_at, NOW() - INTERVAL '1 minute') + make_interval(secs => 60.0 / $1::int)
       RETURNING next_at)
     SELECT CASE WHEN next_at > NOW() THEN next_at END AS admitted_at FROM slot`,
    [perMinute],
  );
  return slot.rows[0]?.admitted_at ?? null;
}

/** Points the message's identity at `userId` (`/link CODE`); a user it had been given before keeps its data. */
export async function linkIdentity(client: DbClient, message: InboundMessage, userId: string): Promise<void> {
  await client.query(
    `INSERT INTO channel_identities (channel, external_id, bsuid, user_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (channel, external_id) DO UPDATE SET user_id = EXCLUDED.user_id, last_seen_at = NOW(), admitted_at = NULL`,
    [message.channel, message.sender.id, message.sender.bsuid ?? null, userId],
  );
}

/** docs/channels.md#session-keys: groups have their own session; direct chats follow the user's dm_scope. */
export async function channelSessionKey(db: Queryable, userId: string, message: InboundMessage): Promise<string> {
  if (message.group !== undefined) {
    // A Telegram supergroup upgraded from a basic group continues the basic group's sessions (docs/channels.md#group-upgrades).
    const group = message.channel === 'telegram' ? await sessionGroupId(db, message.group) : message.group;
    return groupSessionKey(message.channel, group);
  }
  const found = await db.query<{ dm_scope: string | null }>(
    `SELECT settings->>'dm_scope' AS dm_scope FROM user_preferences WHERE user_id = $1`,
    [userId],
  );
  return found.rows[0]?.dm_scope === 'per-channel' ? directSessionKey(message.channel, message.sender.id) : MAIN_SESSION_KEY;
}

/**
 * The direct chat of the identity the user wrote from most recently, among `preferred` (the
 * channels this gateway sends on), else among the others: a gateway without the user's channel
 * hands the delivery back for one that has it, as with any delivery. Never on an `excluded`
 * channel (one that refused the notice). None while an admin has disabled the user: a notice
 * queued before that is not sent.
 */
export async function lastUsedAddress(
  db: Queryable,
  userId: string,
  preferred: ChannelName[],
  excluded: ChannelName[] = [],
): Promise<ChannelAddress | undefined> {
  const found = await db.query<{ channel: ChannelName; external_id: string }>(
    `SELECT i.channel, i.external_id FROM channel_identities i JOIN users u ON u.id = i.user_id AND u.disabled_at IS NULL
     WHERE i.user_id = $1 AND i.channel <> ALL($3) ORDER BY i.channel = ANY($2) DESC, i.last_seen_at DESC LIMIT 1`,
    [userId, preferred, excluded],
  );
  const row = found.rows[0];
  return row ? directAddress(row.channel, row.external_id) : undefined;
}
