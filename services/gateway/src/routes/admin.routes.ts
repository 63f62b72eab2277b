import { Router } from 'express';
import { z } from 'zod';
import { requestErasure, type Runtime } from '@assistant/shared';
import { requireAdmin } from '../http/auth';
import { notFound } from '../http/errors';
import { idParam, parse } from '../http/validate';

export const patchAdminUserBody = z.strictObject({
  disabled: z.boolean().optional(),
  daily_token_budget: z
    .number()
    .int()
    .min(0)
    .max(Number.MAX_SAFE_INTEGER)
    .nullable()
    .optional()
    .meta({ description: 'model tokens per UTC day; null = DAILY_TOKEN_BUDGET, 0 = no limit' }),
});

// Users being erased are gone as far as anyone can tell.
const ADMIN_USER = `SELECT id, display_name, created_at, disabled_at IS NOT NULL AS disabled, daily_token_budget FROM users`;

/** CONTRACT §3: the operator's view of users (admin token): list, disable, budget, erase. */
export function adminRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db } = runtime;
  router.use('/v1/admin', requireAdmin(runtime.config.ADMIN_TOKEN));

  router.get('/v1/admin/users', async (_req, res) => {
    res.json((await db.query(`${ADMIN_USER} WHERE erasing_at IS NULL ORDER BY created_at, id`)).rows);
  });

  router.patch('/v1/admin/users/:id', async (req, res) => {
    const userId = idParam(req.params.id, 'user');
    const body = parse(patchAdminUserBody, req.body);
    const updated = await db.query(
      `UPDATE users SET
         disabled_at = CASE WHEN $2::boolean IS NULL THEN disabled_at WHEN $2 THEN COALESCE(disabled_at, NOW()) END,
         daily_token_budget = CASE WHEN $3::boolean THEN $4::bigint ELSE daily_token_budget END,
         updated_at = NOW()
       WHERE id = $1 AND erasing_at IS NULL RETURNING id`,
      [userId, body.disabled ?? null, body.daily_token_budget !== undefined, body.daily_token_budget ?? null],
    );
    if (updated.rowCount !== 1) throw notFound('user');
    res.json((await db.query(`${ADMIN_USER} WHERE id = $1`, [userId])).rows[0]);
  });

  router.delete('/v1/admin/users/:id', async (req, res) => {
    const userId = idParam(req.params.id, 'user');
    if (!(await requestErasure(db, runtime.queues, userId))) throw notFound('user');
    res.status(202).json({ id: userId, erasing: true });
  });

  return router;
}
