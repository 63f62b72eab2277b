import type { Router } from 'express';
import { z } from 'zod';
import { answerContinue, cancelTurn, type ControlOutcome, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { HttpError, notFound } from '../http/errors';
import { uuidParam } from '../http/validate';
import { defineRoutes, failure } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

export const continueTurnBody = z.strictObject({ continue: z.boolean() });

/** A turn's id in the path; the event stream's route (sse.routes.ts) takes it too. */
export const turnId = { params: { id: uuidParam }, notFound: 'turn' } as const;

export const turnApi = defineRoutes({
  getTurn: {
    method: 'get',
    path: '/v1/turns/:id',
    tag: 'turns',
    summary: "A turn's status",
    auth: 'user',
    ...turnId,
    responses: { 200: { description: 'the turn', schema: shape.turnResponse } },
  },
  cancelTurn: {
    method: 'post',
    path: '/v1/turns/:id/cancel',
    tag: 'turns',
    summary: 'Cancel a turn: pending tasks are skipped',
    auth: 'user',
    ...turnId,
    responses: { 202: { description: 'cancelled', schema: shape.cancelResponse }, 409: failure('the turn has already finished') },
  },
  continueTurn: {
    method: 'post',
    path: '/v1/turns/:id/continue',
    tag: 'turns',
    summary: 'Answer an ask_user_continue: go on with the remaining tasks or stop',
    auth: 'user',
    ...turnId,
    body: continueTurnBody,
    example: { continue: true },
    responses: { 202: { description: 'answered', schema: shape.continueResponse }, 409: failure('the turn is not waiting for an answer') },
  },
});

/** Maps a control outcome to the HTTP answer; the outbox is published on success. */
async function answer(runtime: Runtime, turnId: string, outcome: ControlOutcome, conflict: string): Promise<void> {
  if (outcome === 'not_found') throw notFound('turn');
  if (outcome === 'conflict') throw new HttpError(409, 'conflict', conflict);
  await runtime.outbox.flush(turnId);
}

export function turnRoutes(runtime: Runtime): Router {
  const { db } = runtime;
  return apiRouter(turnApi, {
    getTurn: async (req, res, { params }) => {
      const found = await db.query(
        `SELECT id, status, session_key, iterations, created_at, finished_at FROM turns WHERE id = $1 AND user_id = $2`,
        [params.id, userOf(req)],
      );
      if (!found.rows[0]) throw notFound('turn');
      res.json(found.rows[0]);
    },

    cancelTurn: async (req, res, { params }) => {
      await answer(runtime, params.id, await cancelTurn(db, { userId: userOf(req), turnId: params.id }), 'the turn has already finished');
      res.status(202).json({ id: params.id, status: 'cancelled' });
    },

    continueTurn: async (req, res, { params, body }) => {
      const input = { userId: userOf(req), turnId: params.id, proceed: body.continue };
      const outcome = await answerContinue(db, input, runtime.config.MAX_ACTIVE_TURNS_PER_USER);
      await answer(runtime, params.id, outcome, 'the turn is not waiting for an answer');
      res.status(202).json({ id: params.id, continue: body.continue });
    },
  });
}
