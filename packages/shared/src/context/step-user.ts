import type { Queryable } from '../db';
import { ALLOWANCE_COLUMNS, allowanceOf, type Allowance, type AllowanceRow } from '../usage/usage-store';
import { PROFILE_COLUMNS, toProfile, type ProfileRow } from './profile-store';
import type { Profile } from './profile-defaults';
import type { AssistantIdentity } from './system-prompt';

/** What a model step reads about its user, in one query: the step's budget check and its request both come from it. */
export interface StepUser {
  assistant: AssistantIdentity;
  profile: Profile;
  timeZone: string;
  /** Whether the request gets the user's documents that match the message (`use_rag_by_default`). */
  useRag: boolean;
  allowance: Allowance;
}

interface StepUserRow extends AllowanceRow {
  assistant_name: string;
  assistant_emoji: string | null;
  assistant_creature: string | null;
  assistant_tone: string | null;
  assistant_vibe: string | null;
  timezone: string | null;
  use_rag_by_default: boolean | null;
  has_profile: boolean;
}

export async function loadStepUser(db: Queryable, userId: string, defaultBudget: number): Promise<StepUser> {
  const found = await db.query<StepUserRow & ProfileRow>(
    `SELECT u.assistant_name, u.assistant_emoji, u.assistant_creature, u.assistant_tone, u.assistant_vibe, ${ALLOWANCE_COLUMNS},
       p.timezone, p.use_rag_by_default, m.user_id IS NOT NULL AS has_profile, ${PROFILE_COLUMNS.map((column) => `m.${column}`).join(', ')}
     FROM users u
     LEFT JOIN user_preferences p ON p.user_id = u.id
     LEFT JOIN agent_memory_profiles m ON m.user_id = u.id
     WHERE u.id = $1`,
    [userId],
  );
  const row = found.rows[0];
  return {
    assistant: {
      name: row?.assistant_name ?? 'Nexo',
      emoji: row?.assistant_emoji,
      creature: row?.assistant_creature,
      tone: row?.assistant_tone,
      vibe: row?.assistant_vibe,
    },
    profile: toProfile(row?.has_profile ? row : undefined),
    timeZone: row?.timezone ?? 'UTC',
    useRag: row?.use_rag_by_default !== false,
    allowance: allowanceOf(row, defaultBudget),
  };
}
