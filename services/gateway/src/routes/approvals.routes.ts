import { Router } from 'express';
import { z } from 'zod';
import { decideApproval, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { HttpError, notFound } from '../http/errors';
import { idParam, parse } from '../http/validate';

const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;

export const listApprovalsQuery = z.object({ status: z.enum(APPROVAL_STATUSES).optional() });
export const decideApprovalBody = z.strictObject({ decision: z.enum(['approve', 'reject']) });

export function approvalRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db } = runtime;

  router.get('/v1/approvals', async (req, res) => {
    const query = parse(listApprovalsQuery, req.query);
    // An approval past its TTL reads as expired even before the expiry job has run. `approval_id`
    // is the name every event uses; `id` stays for clients written before it.
    const found = await db.query(
      `SELECT * FROM (
         SELECT a.id, a.id AS approval_id, a.turn_id, k.ref AS task_id, k.tool_name, k.description, k.arguments,
                CASE WHEN a.status = 'pending' AND a.expires_at <= NOW() THEN 'expired' ELSE a.status END AS status,
                t.session_key, a.created_at, a.expires_at, a.decided_at
         FROM approvals a JOIN tasks k ON k.id = a.task_id JOIN turns t ON t.id = a.turn_id
         WHERE a.user_id = $1) approvals
       WHERE $2::text IS NULL OR status = $2 ORDER BY created_at`,
      [userOf(req), query.status ?? null],
    );
    res.json(found.rows);
  });

  router.post('/v1/approvals/:id', async (req, res) => {
    const approvalId = idParam(req.params.id, 'approval');
    const body = parse(decideApprovalBody, req.body);
    const { outcome, turnId } = await decideApproval(db, { userId: userOf(req), approvalId, decision: body.decision });
    if (turnId) await runtime.outbox.flush(turnId);
    if (outcome === 'not_found') throw notFound('approval');
    if (outcome === 'conflict') throw new HttpError(409, 'conflict', 'the approval was already decided or has expired');
    res.json({ id: approvalId, status: body.decision === 'approve' ? 'approved' : 'rejected' });
  });

  return router;
}
