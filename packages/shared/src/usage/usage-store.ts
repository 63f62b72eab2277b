import type { Queryable } from '../db';

/** Tokens one model call used, as the provider reported them (zeros when it reported none). */
export interface ModelUsage {
  promptTokens: number;
  completionTokens: number;
  /** Part of promptTokens the provider served from its prompt cache (`prompt_tokens_details.cached_tokens`). */
  cachedPromptTokens?: number;
}

export interface UsageDay {
  date: string;
  turns: number;
  model_calls: number;
  prompt_tokens: number;
  cached_prompt_tokens: number;
  completion_tokens: number;
}

export interface Budget {
  /** 0 = no limit. */
  daily_tokens: number;
  used_today: number;
}

/** The user's budget for today (their override, else the default; 0 = none) and what they used of it. */
export async function userBudget(db: Queryable, userId: string, defaultBudget: number): Promise<Budget> {
  const found = await db.query<AllowanceRow>(`SELECT ${ALLOWANCE_COLUMNS} FROM users u WHERE u.id = $1`, [userId]);
  const { disabled: _disabled, ...budget } = allowanceOf(found.rows[0], defaultBudget);
  return budget;
}

/** What decides whether a user's turn may call the model now: their budget, and whether an admin disabled them. */
export type Allowance = Budget & { disabled: boolean };

/** The columns `allowanceOf` reads, for a query over `users` aliased `u`. */
export const ALLOWANCE_COLUMNS = `u.daily_token_budget AS daily_tokens, u.disabled_at IS NOT NULL AS disabled,
  COALESCE((SELECT SUM(prompt_tokens + completion_tokens) FROM model_usage
            WHERE user_id = u.id AND day = (NOW() AT TIME ZONE 'UTC')::date), 0)::bigint AS used_today`;

export interface AllowanceRow {
  daily_tokens: number | null;
  used_today: number;
  disabled: boolean;
}

export function allowanceOf(row: AllowanceRow | undefined, defaultBudget: number): Allowance {
  return { daily_tokens: row?.daily_tokens ?? defaultBudget, used_today: row?.used_today ?? 0, disabled: row?.disabled ?? false };
}

export function budgetExhausted(budget: Budget): boolean {
  return budget.daily_tokens > 0 && budget.used_today >= budget.daily_tokens;
}

/** Budgets are per UTC day: they reset at the next UTC midnight. */
export function nextUtcMidnight(now: Date = new Date()): Date {
  return new Date(Date.UTC(now.getUTCFullYear(), now.getUTCMonth(), now.getUTCDate() + 1));
}

/** What the user reads (on the event stream and on a chat) when a turn stops at the budget. */
export function budgetExhaustedMessage(budget: Budget, now: Date = new Date()): string {
  const resets = nextUtcMidnight(now);
  const minutes = Math.ceil((resets.getTime() - now.getTime()) / 60_000);
  const wait = minutes >= 60 ? `${Math.floor(minutes / 60)} h ${minutes % 60} min` : `${minutes} min`;
  return (
    `You have used today's budget of ${budget.daily_tokens} model tokens, so I cannot answer now. ` +
    `It resets at ${resets.toISOString().slice(0, 16).replace('T', ' ')} UTC (in ${wait}).`
  );
}

/**
 * Records a session digest's model call (docs/memory.md#session-digests), in the transaction that
 * commits the digest's outcome so that a retried digest job counts each call once.
 */
export async function recordDigestUsage(db: Queryable, userId: string, sessionId: string, usage: ModelUsage): Promise<void> {
  await db.query(
    `INSERT INTO model_usage (session_id, user_id, prompt_tokens, cached_prompt_tokens, completion_tokens) VALUES ($1, $2, $3, $4, $5)`,
    [sessionId, userId, usage.promptTokens, usage.cachedPromptTokens ?? 0, usage.completionTokens],
  );
}

/** The user's usage of the last `days` UTC days, today included, newest first; days without calls show zeros. */
export async function usageByDay(db: Queryable, userId: string, days: number): Promise<UsageDay[]> {
  const found = await db.query<UsageDay>(
    `SELECT to_char(d.day, 'YYYY-MM-DD') AS date,
            COUNT(DISTINCT u.turn_id)::int AS turns,
            COUNT(u.user_id)::int AS model_calls,
            COALESCE(SUM(u.prompt_tokens), 0)::bigint AS prompt_tokens,
            COALESCE(SUM(u.cached_prompt_tokens), 0)::bigint AS cached_prompt_tokens,
            COALESCE(SUM(u.completion_tokens), 0)::bigint AS completion_tokens
     FROM generate_series((NOW() AT TIME ZONE 'UTC')::date - ($2::int - 1), (NOW() AT TIME ZONE 'UTC')::date, interval '1 day') AS d(day)
     LEFT JOIN model_usage u ON u.user_id = $1 AND u.day = d.day::date
     GROUP BY d.day ORDER BY d.day DESC`,
    [userId, days],
  );
  return found.rows;
}
