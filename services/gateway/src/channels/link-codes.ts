import { createHash, randomBytes } from 'node:crypto';
import type { Queryable } from '@assistant/shared';

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
