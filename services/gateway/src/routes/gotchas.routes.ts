import { Router } from 'express';
import { z } from 'zod';
import { addManualGotcha, isToolName, listGotchas, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { rateLimit } from '../http/rate-limit';
import { parse } from '../http/validate';

export const postGotchaBody = z.strictObject({
  tool_name: z.string().refine(isToolName, 'must be the name of a tool').optional(),
  description: z.string().trim().min(1, 'must not be blank').max(2_000),
});

/** Manual gotchas a user may add per window: each one is stored and may reach later prompts. */
export const GOTCHAS_PER_WINDOW = 30;
const WINDOW_MS = 10 * 60_000;

/** Seed 003's gotchas (CONTRACT §3): the ones captured from repeated tool errors and the ones added by hand. */
export function gotchaRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db } = runtime;
  const limit = rateLimit(runtime.redis, runtime.config.QUEUE_PREFIX, 'gotchas', GOTCHAS_PER_WINDOW, WINDOW_MS, 'gotchas');

  router.get('/v1/gotchas', async (req, res) => {
    res.json(await listGotchas(db, userOf(req)));
  });

  router.post('/v1/gotchas', limit, async (req, res) => {
    const body = parse(postGotchaBody, req.body);
    res.status(201).json(await addManualGotcha(db, userOf(req), body));
  });

  return router;
}
