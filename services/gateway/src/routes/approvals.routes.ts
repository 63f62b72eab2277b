import type { Router } from 'express';
import { z } from 'zod';
import { decideApproval, type DecidedStatus, type Runtime } from '@assistant/shared';
import { APPROVAL_STATUSES, approvalsPage } from '../approvals/approvals-page';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { HttpError, notFound } from '../http/errors';
import { DEFAULT_PAGE_LIMIT, nextPageLink, pageLimit } from '../http/pages';
import { uuidParam } from '../http/validate';
import { defineRoutes, failure } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

export const listApprovalsQuery = z.object({
  status: z.enum(APPROVAL_STATUSES).optional(),
  limit: pageLimit,
  after: uuidParam.optional().meta({ description: "the id of the previous page's last approval, from its Link header" }),
});
export const decideApprovalBody = z.strictObject({ decision: z.enum(['approve', 'reject']) });

export const approvalApi = defineRoutes({
  listApprovals: {
    method: 'get',
    path: '/v1/approvals',
    tag: 'approvals',
    summary: 'Approvals of tool calls in manual mode',
    auth: 'user',
    query: listApprovalsQuery,
    responses: { 200: { description: 'oldest first; a Link header names the next page', schema: z.array(shape.approvalResponse) } },
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
      const page = await approvalsPage(db, userOf(req), { ...query, limit: query.limit ?? DEFAULT_PAGE_LIMIT });
      if (page.next) res.set('Link', nextPageLink('/v1/approvals', { status: query.status, limit: query.limit, after: page.next }));
      res.json(page.rows);
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
