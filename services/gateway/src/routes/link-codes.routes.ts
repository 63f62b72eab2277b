import { Router } from 'express';
import type { Runtime } from '@assistant/shared';
import { createLinkCode } from '../channels/link-codes';
import { userOf } from '../http/auth';
import { rateLimit } from '../http/rate-limit';

/** A person links a handful of chats; more codes than this only help someone guessing at them. */
export const LINK_CODES_PER_WINDOW = 10;
const WINDOW_MS = 10 * 60_000;

export function linkCodeRoutes(runtime: Runtime): Router {
  const router = Router();
  const limit = rateLimit(runtime.redis, runtime.config.QUEUE_PREFIX, 'link-codes', LINK_CODES_PER_WINDOW, WINDOW_MS, 'link codes');
  /** A code for `/link CODE` on Telegram or WhatsApp: that chat then talks to this user. */
  router.post('/v1/link-codes', limit, async (req, res) => {
    res.status(201).json(await createLinkCode(runtime.db, userOf(req)));
  });
  return router;
}
