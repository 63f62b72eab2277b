import type { Router } from 'express';
import type { Runtime } from '@assistant/shared';
import { createLinkCode } from '../channels/link-codes';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { rateLimit } from '../http/rate-limit';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

/** A person links a handful of chats; more codes than this only help someone guessing at them. */
export const LINK_CODES_PER_WINDOW = 10;
const WINDOW_MS = 10 * 60_000;

export const linkCodeApi = defineRoutes({
  createLinkCode: {
    method: 'post',
    path: '/v1/link-codes',
    tag: 'channels',
    summary: 'A one-time code that links a Telegram or WhatsApp chat to this user',
    auth: 'user',
    responses: { 201: { description: 'the code', schema: shape.linkCodeResponse } },
  },
});

export function linkCodeRoutes(runtime: Runtime): Router {
  const limit = rateLimit(runtime.redis, runtime.config.QUEUE_PREFIX, 'link-codes', LINK_CODES_PER_WINDOW, WINDOW_MS, 'link codes');
  return apiRouter(linkCodeApi, {
    /** A code for `/link CODE` on Telegram or WhatsApp: that chat then talks to this user. */
    createLinkCode: async (req, res) => {
      await limit(req);
      res.status(201).json(await createLinkCode(runtime.db, userOf(req)));
    },
  });
}
