import { Router } from 'express';
import { z } from 'zod';
import { usageByDay, userBudget, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { parse } from '../http/validate';

export const usageQuery = z.object({
  days: z.coerce.number<string>().int().min(1).max(90).optional().meta({ description: 'UTC days, today included (default 7)' }),
});

/** CONTRACT §3: the user's model usage per UTC day, newest first, and today's budget. */
export function usageRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db, config } = runtime;

  router.get('/v1/usage', async (req, res) => {
    const query = parse(usageQuery, req.query);
    const userId = userOf(req);
    const [days, budget] = await Promise.all([
      usageByDay(db, userId, query.days ?? 7),
      userBudget(db, userId, config.DAILY_TOKEN_BUDGET),
    ]);
    res.json({ days, budget });
  });

  return router;
}
