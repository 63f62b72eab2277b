import type { Router } from 'express';
import { z } from 'zod';
import { decideApproval, eventArguments, type DecidedStatus, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { HttpError, notFound } from '../http/errors';
import { uuidParam } from '../http/validate';
import { defineRoutes, failure } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

const APPROVAL_STATUSES = ['pending', 'approved', 'rejected', 'expired'] as const;

export const listApprovalsQuery = z.object({ status: z.enum(APPROVAL_STATUSES).optional() });
export const decideApprovalBody = z.strictObject({ decision: z.enum(['approve', 'reject']) });

export const approvalApi = defineRoutes({
  listApprovals: {
    method: 'get',
    path: '/v1/approvals',
    tag: 'approvals',
    summary: 'Approvals of tool calls in manual mode',
    auth: 'user',
    query: listApprovalsQuery,
    responses: { 200: { description: 'oldest first', schema: z.array(shape.approvalResponse) } },
  },
  decideApproval: {
    method: 'post',
    path: '/v1/approvals/:id',
    tag: 'approvals',
    summary: 'Approve or reject a tool call',
    auth: 'user',
    params: { id: uuidParam },
    notFound: 'approval',
    body: decideApprovalBody,
    example: { decision: 'approve' },
    responses: {
      200: { description: 'decided', schema: shape.decisionResponse },
      409: failure('already decided or expired; `details.status` says which: `approved`, `rejected` or `expired`'),
    },
  },
});

/** 409 naming what the approval already is, so a client can tell "decided" from "expired". */
function approvalConflict(status: DecidedStatus | undefined): HttpError {
  const message = status === 'expired' ? 'the approval has expired' : `the approval was already ${status ?? 'decided'}`;
  return new HttpError(409, 'conflict', message, { status });
}

export function approvalRoutes(runtime: Runtime): Router {
  const { db } = runtime;
  return apiRouter(approvalApi, {
    listApprovals: async (req, res, { query }) => {
      // An approval past its TTL reads as expired even before the expiry job has run. `approval_id`
      // is the name every event uses; `id` stays for clients written before it. The approvals of
      // one model step share created_at (one transaction): they follow their tasks' order.
      const found = await db.query<{ arguments: Record<string, unknown> | null }>(
        `SELECT a.id, a.id AS approval_id, a.turn_id, k.ref AS task_id, k.tool_name, k.description, k.arguments,
                shown.status, t.session_key, a.created_at, a.expires_at, a.decided_at
         FROM approvals a JOIN tasks k ON k.id = a.task_id JOIN turns t ON t.id = a.turn_id
         CROSS JOIN LATERAL (
           SELECT CASE WHEN a.status = 'pending' AND a.expires_at <= NOW() THEN 'expired' ELSE a.status END AS status
         ) shown
         WHERE a.user_id = $1 AND ($2::text IS NULL OR shown.status = $2)
         ORDER BY a.created_at, a.turn_id, k.position`,
        [userOf(req), query.status ?? null],
      );
      // Arguments as the tool_approval_request event showed them: never a UUID.
      res.json(found.rows.map((row) => ({ ...row, arguments: eventArguments(row.arguments) })));
    },

    decideApproval: async (req, res, { params, body }) => {
      const approvalId = params.id;
      const decision = { userId: userOf(req), approvalId, decision: body.decision };
      const { outcome, turnId, status } = await decideApproval(db, decision, runtime.config.MAX_ACTIVE_TURNS_PER_USER);
      if (turnId) await runtime.outbox.flush(turnId);
      if (outcome === 'not_found') throw notFound('approval');
      if (outcome === 'conflict') throw approvalConflict(status);
      res.json({ id: approvalId, status: body.decision === 'approve' ? 'approved' : 'rejected' });
    },
  });
}
