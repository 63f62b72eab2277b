import { Router } from 'express';
import { z } from 'zod';
import { answerContinue, cancelTurn, type ControlOutcome, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { HttpError, notFound } from '../http/errors';
import { idParam, parse } from '../http/validate';

export const continueTurnBody = z.strictObject({ continue: z.boolean() });

/** Maps a control outcome to the HTTP answer; the outbox is published on success. */
async function answer(runtime: Runtime, turnId: string, outcome: ControlOutcome, conflict: string): Promise<void> {
  if (outcome === 'not_found') throw notFound('turn');
  if (outcome === 'conflict') throw new HttpError(409, 'conflict', conflict);
  await runtime.outbox.flush(turnId);
}

export function turnRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db } = runtime;

  router.get('/v1/turns/:id', async (req, res) => {
    const turnId = idParam(req.params.id, 'turn');
    const found = await db.query(
      `SELECT id, status, session_key, iterations, created_at, finished_at FROM turns WHERE id = $1 AND user_id = $2`,
      [turnId, userOf(req)],
    );
    if (!found.rows[0]) throw notFound('turn');
    res.json(found.rows[0]);
  });

  router.post('/v1/turns/:id/cancel', async (req, res) => {
    const turnId = idParam(req.params.id, 'turn');
    await answer(runtime, turnId, await cancelTurn(db, { userId: userOf(req), turnId }), 'the turn has already finished');
    res.status(202).json({ id: turnId, status: 'cancelled' });
  });

  router.post('/v1/turns/:id/continue', async (req, res) => {
    const turnId = idParam(req.params.id, 'turn');
    const body = parse(continueTurnBody, req.body);
    const outcome = await answerContinue(db, { userId: userOf(req), turnId, proceed: body.continue });
    await answer(runtime, turnId, outcome, 'the turn is not waiting for an answer');
    res.status(202).json({ id: turnId, continue: body.continue });
  });

  return router;
}
