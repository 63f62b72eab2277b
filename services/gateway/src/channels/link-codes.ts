import { createHash, randomBytes } from 'node:crypto';
import { linkAttemptsOf, type Queryable, type Runtime } from '@assistant/shared';
import { hitRateLimit } from '../http/rate-limit';

// 32 symbols without look-alikes (no I, O, 0, 1): a byte modulo 32 picks one without bias.
const ALPHABET = 'ABCDEFGHJKLMNPQRSTUVWXYZ23456789';
const CODE_LENGTH = 8;
export const LINK_CODE_TTL_SECONDS = 600;

const hashCode = (code: string) => createHash('sha256').update(code).digest('hex');

/** A single-use code for `/link CODE`, valid for ten minutes; only its hash is stored. */
export async function createLinkCode(db: Queryable, userId: string): Promise<{ code: string; expires_at: string }> {
  const code = [...randomBytes(CODE_LENGTH)].map((byte) => ALPHABET[byte % ALPHABET.length]).join('');
  const created = await db.query<{ expires_at: Date }>(
    `INSERT INTO link_codes (code_hash, user_id, expires_at) VALUES ($1, $2, NOW() + make_interval(secs => $3)) RETURNING expires_at`,
    [hashCode(code), userId, LINK_CODE_TTL_SECONDS],
  );
  return { code, expires_at: (created.rows[0] as { expires_at: Date }).expires_at.toISOString() };
}

/** Uses up a valid code (normalised: upper case, no spaces or dashes); answers its user. */
export async function consumeLinkCode(db: Queryable, code: string): Promise<string | undefined> {
  if (code === '') return undefined;
  const used = await db.query<{ user_id: string }>(
    `UPDATE link_codes SET used_at = NOW() WHERE code_hash = $1 AND used_at IS NULL AND expires_at > NOW() RETURNING user_id`,
    [hashCode(code)],
  );
  return used.rows[0]?.user_id;
}

/**
 * How often `/link` may be tried (docs/channels.md#identities-and-linking). A code is one of 32^8
 * (2^40) and lives ten minutes, so guessing one takes about 10^12 tries: five tries per chat
 * identity per code lifetime, and 100 a minute from everyone together, keep a guesser with many
 * accounts far from that, while a person who mistypes a code can still try again.
 */
export const LINK_ATTEMPTS = {
  perSender: 5,
  senderWindowMs: LINK_CODE_TTL_SECONDS * 1000,
  everyone: 100,
  everyoneWindowMs: 60_000,
} as const;

/**
 * Counts one `/link` attempt of a chat identity: `allowed` to check its code, else why not.
 * `sender-silent` is a sender already told it is over its limit: telling it again on every
 * message would only let it make the bot send messages.
 */
export async function countLinkAttempt(
  runtime: Runtime,
  channel: string,
  senderId: string,
): Promise<'allowed' | 'sender-limited' | 'sender-silent' | 'everyone-limited'> {
  const { redis, config } = runtime;
  const sender = await hitRateLimit(
    redis,
    config.QUEUE_PREFIX,
    'link-attempts',
    linkAttemptsOf(channel, senderId),
    LINK_ATTEMPTS.senderWindowMs,
  );
  if (sender.hits > LINK_ATTEMPTS.perSender) return sender.hits === LINK_ATTEMPTS.perSender + 1 ? 'sender-limited' : 'sender-silent';
  const everyone = await hitRateLimit(redis, config.QUEUE_PREFIX, 'link-attempts', 'everyone', LINK_ATTEMPTS.everyoneWindowMs);
  return everyone.hits > LINK_ATTEMPTS.everyone ? 'everyone-limited' : 'allowed';
}
