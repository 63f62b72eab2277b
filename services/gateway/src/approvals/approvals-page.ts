import { eventArguments, type Queryable } from '@assistant/shared';
import { invalidInput } from '../http/errors';
import type { Page } from '../http/pages';

export const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;
type ApprovalStatus = (typeof APPROVAL_STATUSES)[number];

export interface ApprovalsPageQuery {
  status?: ApprovalStatus;
  limit: number;
  /** The id of the last approval of the page before. */
  after?: string;
}

/**
 * A user's approvals oldest first, `limit` of them after the approval `after`; the cursor of the
 * next page is the id of this page's last one. The approvals of one model step share created_at
 * (one transaction): they follow their tasks' order, so (created_at, turn, position) orders every
 * approval once. One past its TTL reads as expired, decided when it expired (as the expiry job
 * records it), even before that job has run. `approval_id` is the name every event uses; `id`
 * stays for clients written before it.
 */
export async function approvalsPage(db: Queryable, userId: string, query: ApprovalsPageQuery): Promise<Page<object>> {
  // Approvals are deleted only with their user: a cursor naming none of theirs came from no page of theirs.
  if (query.after && (await db.query('SELECT 1 FROM approvals WHERE id = $1 AND user_id = $2', [query.after, userId])).rowCount === 0) {
    throw invalidInput(['after'], 'after names no approval of yours: use the Link header of the page before');
  }
  const found = await db.query<{ id: string; arguments: Record<string, unknown> | null }>(
    `SELECT a.id, a.id AS approval_id, a.turn_id, k.ref AS task_id, k.tool_name, k.description, k.arguments,
            shown.status, t.session_key, a.created_at, a.expires_at, shown.decided_at
     FROM approvals a JOIN tasks k ON k.id = a.task_id JOIN turns t ON t.id = a.turn_id
     CROSS JOIN LATERAL (SELECT a.status = 'pending' AND a.expires_at <= NOW() AS overdue) due
     CROSS JOIN LATERAL (
       SELECT CASE WHEN due.overdue THEN 'expired' ELSE a.status END AS status,
              CASE WHEN due.overdue THEN a.expires_at ELSE a.decided_at END AS decided_at
     ) shown
     WHERE a.user_id = $1 AND ($2::text IS NULL OR shown.status = $2)
       AND ($3::uuid IS NULL OR (a.created_at, a.turn_id, k.position) > (
         SELECT p.created_at, p.turn_id, pk.position FROM approvals p JOIN tasks pk ON pk.id = p.task_id WHERE p.id = $3 AND p.user_id = $1))
     ORDER BY a.created_at, a.turn_id, k.position
     LIMIT $4`,
    [userId, query.status ?? null, query.after ?? null, query.limit + 1],
  );
  const rows = found.rows.slice(0, query.limit);
  const next = found.rows.length > query.limit ? rows.at(-1)?.id : undefined;
  // Arguments as the tool_approval_request event showed them: never a UUID.
  return { rows: rows.map((row) => ({ ...row, arguments: eventArguments(row.arguments) })), ...(next ? { next } : {}) };
}
