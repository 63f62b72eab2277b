import { Router } from 'express';
import type { Runtime } from '@assistant/shared';
import { createLinkCode } from '../channels/link-codes';
import { userOf } from '../http/auth';

export function linkCodeRoutes(runtime: Runtime): Router {
  const router = Router();
  /** A code for `/link CODE` on Telegram or WhatsApp: that chat then talks to this user. */
  router.post('/v1/link-codes', async (req, res) => {
    res.status(201).json(await createLinkCode(runtime.db, userOf(req)));
  });
  return router;
}
