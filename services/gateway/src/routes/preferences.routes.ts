import { Router } from 'express';
import { z } from 'zod';
import type { Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { parse } from '../http/validate';

/** Seed 001's validation rules; `settings` is merged key by key, with the keys we know checked. */
export const patchPreferencesBody = z
  .strictObject({
    autonomous_mode: z.boolean(),
    max_iterations: z.number().int().min(1).max(50),
    default_model: z.string().trim().min(1).max(100).nullable(),
    use_rag_by_default: z.boolean(),
    settings: z.looseObject({ dm_scope: z.enum(['main', 'per-channel']).optional() }),
  })
  .partial();

const COLUMNS = 'autonomous_mode, max_iterations, default_model, use_rag_by_default, settings, created_at, updated_at';

export function preferenceRoutes(runtime: Runtime): Router {
  const router = Router();
  const { db } = runtime;

  router.get('/v1/preferences', async (req, res) => {
    const found = await db.query(`SELECT ${COLUMNS} FROM user_preferences WHERE user_id = $1`, [userOf(req)]);
    res.json(found.rows[0]);
  });

  router.patch('/v1/preferences', async (req, res) => {
    const body = parse(patchPreferencesBody, req.body);
    const fields = Object.entries(body).filter(([, value]) => value !== undefined);
    const sets = fields.map(([column], i) =>
      column === 'settings' ? `settings = settings || $${i + 2}::jsonb` : `${column} = $${i + 2}`,
    );
    const values = fields.map(([column, value]) => (column === 'settings' ? JSON.stringify(value) : value));
    const found =
      sets.length === 0
        ? await db.query(`SELECT ${COLUMNS} FROM user_preferences WHERE user_id = $1`, [userOf(req)])
        : await db.query(`UPDATE user_preferences SET ${sets.join(', ')} WHERE user_id = $1 RETURNING ${COLUMNS}`, [
            userOf(req),
            ...values,
          ]);
    res.json(found.rows[0]);
  });

  return router;
}
