import { Router, type RequestHandler } from 'express';
import { z } from 'zod';
import { requestErasure, type Runtime } from '@assistant/shared';
import { requireAdmin, userOf } from '../http/auth';
import { notFound } from '../http/errors';
import { parse } from '../http/validate';
import { createUser } from '../users/users.service';

const nullableText = (max: number) => z.string().trim().max(max).nullable().optional();

export const patchMeBody = z.strictObject({
  assistant_name: z.string().trim().min(1).max(100).optional(),
  assistant_emoji: nullableText(16),
  assistant_creature: nullableText(100),
  assistant_tone: nullableText(50),
  assistant_vibe: nullableText(500),
});

export const createUserBody = z.strictObject({ display_name: z.string().trim().min(1).max(200) });

const USER_COLUMNS = 'id, display_name, assistant_name, assistant_emoji, assistant_creature, assistant_tone, assistant_vibe, created_at, updated_at';

export function userRoutes(runtime: Runtime, authenticate: RequestHandler): Router {
  const router = Router();
  const { db } = runtime;

  router.post('/v1/users', requireAdmin(runtime.config.ADMIN_TOKEN), async (req, res) => {
    const body = parse(createUserBody, req.body);
    res.status(201).json(await createUser(db, body.display_name, runtime.config.DEFAULT_TIMEZONE));
  });

  router.get('/v1/me', authenticate, async (req, res) => {
    const found = await db.query(`SELECT ${USER_COLUMNS} FROM users WHERE id = $1`, [userOf(req)]);
    if (!found.rows[0]) throw notFound('user');
    res.json(found.rows[0]);
  });

  router.patch('/v1/me', authenticate, async (req, res) => {
    const body = parse(patchMeBody, req.body);
    const fields = Object.entries(body).filter(([, value]) => value !== undefined);
    const sets = fields.map(([column], i) => `${column} = $${i + 2}`);
    const found = await db.query(
      `UPDATE users SET ${[...sets, 'updated_at = NOW()'].join(', ')} WHERE id = $1 RETURNING ${USER_COLUMNS}`,
      [userOf(req), ...fields.map(([, value]) => (value === '' ? null : value))],
    );
    res.json(found.rows[0]);
  });

  /** Erasure (CONTRACT §3): the keys stop working now; a job removes everything else. */
  router.delete('/v1/me', authenticate, async (req, res) => {
    const userId = userOf(req);
    if (!(await requestErasure(db, runtime.queues, userId))) throw notFound('user');
    res.status(202).json({ id: userId, erasing: true });
  });

  return router;
}
