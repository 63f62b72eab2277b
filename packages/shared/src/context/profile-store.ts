import type { DbClient, Queryable } from '../db';
import { DEFAULT_PROFILE, PROFILE_SECTIONS, type Profile, type ProfileSection } from './profile-defaults';
import { clipSection, dropOldestMemory } from './profile-limits';

export const PROFILE_COLUMNS = PROFILE_SECTIONS.map((section) => `${section}_content`);

export type ProfileRow = Record<string, string | null>;

/** A user without a profile row has the defaults; a NULL section reads as empty. */
export function toProfile(row: ProfileRow | undefined): Profile {
  return Object.fromEntries(
    PROFILE_SECTIONS.map((section) => [section, row ? (row[`${section}_content`] ?? '') : DEFAULT_PROFILE[section]]),
  ) as Profile;
}

export async function loadProfile(db: Queryable, userId: string): Promise<Profile> {
  const found = await db.query<ProfileRow>(`SELECT ${PROFILE_COLUMNS.join(', ')} FROM agent_memory_profiles WHERE user_id = $1`, [userId]);
  return toProfile(found.rows[0]);
}

/**
 * Writes through an upsert: users get their row when they are created, but a missing one (a
 * user created before profiles existed) starts from the defaults instead of failing. `onConflict`
 * is the SET list for an existing row, where EXCLUDED holds `inserted`.
 */
async function upsert(db: Queryable, userId: string, inserted: Profile, onConflict: string): Promise<Profile> {
  const found = await db.query<ProfileRow>(
    `INSERT INTO agent_memory_profiles (user_id, ${PROFILE_COLUMNS.join(', ')})
     VALUES ($1, ${PROFILE_COLUMNS.map((_, i) => `$${i + 2}`).join(', ')})
     ON CONFLICT (user_id) DO UPDATE SET ${onConflict}, updated_at = NOW()
     RETURNING ${PROFILE_COLUMNS.join(', ')}`,
    [userId, ...PROFILE_SECTIONS.map((section) => inserted[section])],
  );
  return toProfile(found.rows[0]);
}

/** Gives a user the default profile unless they have one: at creation, and before a tool edits one section. */
export async function ensureProfile(db: Queryable, userId: string): Promise<void> {
  await db.query(
    `INSERT INTO agent_memory_profiles (user_id, ${PROFILE_COLUMNS.join(', ')})
     VALUES ($1, ${PROFILE_COLUMNS.map((_, i) => `$${i + 2}`).join(', ')}) ON CONFLICT (user_id) DO NOTHING`,
    [userId, ...PROFILE_SECTIONS.map((section) => DEFAULT_PROFILE[section])],
  );
}

/**
 * The one write of a single section: `PUT /v1/profile/:section`, `update_profile` and appendMemory
 * all come here. What it keeps fits what the PUT accepts, so `GET /v1/profile` can always be PUT
 * back: `update_profile`'s refs, named, can make its text several times longer. MEMORY loses its
 * oldest part (dropOldestMemory), another section its end.
 */
export async function saveProfileSection(db: Queryable, userId: string, section: ProfileSection, content: string): Promise<Profile> {
  const column = `${section}_content`;
  const kept = section === 'memory' ? dropOldestMemory(content) : clipSection(content);
  return upsert(db, userId, { ...DEFAULT_PROFILE, [section]: kept }, `${column} = EXCLUDED.${column}`);
}

/** `POST /v1/profile/reset`: every section back to DEFAULT_PROFILE, MEMORY included. */
export async function resetProfile(db: Queryable, userId: string): Promise<Profile> {
  return upsert(db, userId, DEFAULT_PROFILE, PROFILE_COLUMNS.map((column) => `${column} = EXCLUDED.${column}`).join(', '));
}

/**
 * Every addition to MEMORY comes here (a session digest, `remember`), inside the caller's
 * transaction: `separator` '\n\n' makes `text` a paragraph of its own (a digest), '\n' the next
 * line of what is there (a fact in a list). The oldest part goes once MEMORY would pass
 * MAX_PROFILE_SECTION_CHARS (dropOldestMemory), so it always fits what `PUT /v1/profile/memory`
 * accepts. The row exists (ensureProfile) and stays locked from the read to the write, so
 * additions made at once all land. Answers the new MEMORY.
 */
export async function appendMemory(client: DbClient, userId: string, text: string, separator: '\n\n' | '\n' = '\n\n'): Promise<string> {
  await ensureProfile(client, userId);
  const found = await client.query<{ memory: string | null }>(
    'SELECT memory_content AS memory FROM agent_memory_profiles WHERE user_id = $1 FOR UPDATE',
    [userId],
  );
  const current = found.rows[0]?.memory ?? '';
  const memory = dropOldestMemory(current.trim() === '' ? text : `${current.trimEnd()}${separator}${text}`);
  return (await saveProfileSection(client, userId, 'memory', memory)).memory;
}
