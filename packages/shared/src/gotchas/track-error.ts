import type { Queryable } from '../db';
import { sliceText } from '../text';
import type { GotchaCause } from './gotcha-store';
import { normalizeToolError } from './normalize-error';

/** docs/memory.md#gotchas: the third time the same error happens within a day, it becomes a gotcha. */
export const GOTCHA_THRESHOLD = 3;
const WINDOW_HOURS = 24;
const MAX_DESCRIPTION_CHARS = 1_000;

/**
 * Counts one failure of a tool for a user, inside the transaction that records the task as
 * failed (so a re-run of a finished task cannot count it twice). The count runs in a 24 h window
 * from its first occurrence; the occurrence that reaches GOTCHA_THRESHOLD records a gotcha, and
 * later occurrences of an existing gotcha update it. Below the threshold a window holds at most
 * two occurrences, its first and its last: when it has passed, the new one starts from the last
 * if that is within 24 h, so any three within 24 h count, not only three inside one window.
 * `cause`: what the error says of the tool, which sets the advice shown with its gotcha.
 */
export async function trackToolError(
  db: Queryable,
  userId: string,
  toolName: string,
  error: string,
  cause: GotchaCause = 'arguments',
): Promise<void> {
  const pattern = normalizeToolError(error);
  if (pattern === '') return;
  const counted = await db.query<{ occurrences: number; window_started_at: Date }>(
    `INSERT INTO tool_error_counts (user_id, tool_name, pattern, occurrences, window_started_at, last_seen_at, last_error)
     VALUES ($1, $2, $3, 1, NOW(), NOW(), $4)
     ON CONFLICT (user_id, tool_name, md5(pattern)) DO UPDATE SET
       occurrences = CASE WHEN tool_error_counts.window_started_at > NOW() - make_interval(hours => ${WINDOW_HOURS})
                          THEN tool_error_counts.occurrences + 1
                          WHEN tool_error_counts.last_seen_at > NOW() - make_interval(hours => ${WINDOW_HOURS}) THEN 2 ELSE 1 END,
       window_started_at = CASE WHEN tool_error_counts.window_started_at > NOW() - make_interval(hours => ${WINDOW_HOURS})
                                THEN tool_error_counts.window_started_at
                                WHEN tool_error_counts.last_seen_at > NOW() - make_interval(hours => ${WINDOW_HOURS})
                                THEN tool_error_counts.last_seen_at ELSE NOW() END,
       last_seen_at = NOW(),
       last_error = EXCLUDED.last_error
     RETURNING occurrences, window_started_at`,
    [userId, toolName, pattern, error],
  );
  const bumped = await db.query(
    `UPDATE gotchas SET occurrences = occurrences + 1, last_seen_at = NOW()
     WHERE user_id = $1 AND tool_name = $2 AND md5(pattern) = md5($3) AND source = 'auto_detected'`,
    [userId, toolName, pattern],
  );
  const window = counted.rows[0];
  if (bumped.rowCount !== 0 || !window || window.occurrences < GOTCHA_THRESHOLD) return;
  await db.query(
    `INSERT INTO gotchas (user_id, tool_name, pattern, description, source, occurrences, first_seen_at, last_seen_at, cause)
     VALUES ($1, $2, $3, $4, 'auto_detected', $5, $6, NOW(), $7)
     ON CONFLICT (user_id, tool_name, md5(pattern)) WHERE source = 'auto_detected'
     DO UPDATE SET occurrences = gotchas.occurrences + 1, last_seen_at = EXCLUDED.last_seen_at`,
    [userId, toolName, pattern, sliceText(error, 0, MAX_DESCRIPTION_CHARS), window.occurrences, window.window_started_at, cause],
  );
}
