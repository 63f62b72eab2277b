import type { Router } from 'express';
import { z } from 'zod';
import { usageByDay, userBudget, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { defineRoutes } from '../openapi/api-route';
import { usageResponse } from '../openapi/operator-schemas';

export const usageQuery = z.object({
  // Digits only: Number() would also read '0x10', '1e1' and ' 7' as whole numbers of days.
  days: z
    .string()
    .regex(/^[0-9]+$/, 'a whole number of days, in digits')
    .pipe(z.coerce.number<string>().int().min(1).max(90))
    .optional()
    .meta({ description: 'UTC days, today included, 1 to 90 (default 7)' }),
});

export const usageApi = defineRoutes({
  getUsage: {
    method: 'get',
    path: '/v1/usage',
    tag: 'usage',
    summary: 'Model usage per UTC day (newest first) and the daily token budget',
    auth: 'user',
    query: usageQuery,
    responses: { 200: { description: 'usage and budget', schema: usageResponse } },
  },
});

/** The user's model usage per UTC day, newest first, and today's budget. */
export function usageRoutes(runtime: Runtime): Router {
  const { db, config } = runtime;
  return apiRouter(usageApi, {
    getUsage: async (req, res, { query }) => {
      const userId = userOf(req);
      const [days, budget] = await Promise.all([
        usageByDay(db, userId, query.days ?? 7),
        userBudget(db, userId, config.DAILY_TOKEN_BUDGET),
      ]);
      res.json({ days, budget });
    },
  });
}
