import { Router } from 'express';
import { z } from 'zod';
import { MAIN_SESSION_KEY, sessionKeySchema, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { HttpError } from '../http/errors';
import { parse } from '../http/validate';
import { rateLimit } from '../http/rate-limit';
import { submitMessage } from '../turns/submit-message';

export const MAX_MESSAGE_CHARS = 16_000;

// Unknown fields are ignored rather than refused: clients may send more than we read.
export const postMessageBody = z.object({
  text: z.string().refine((text) => text.trim() !== '', 'must not be empty'),
  session_key: sessionKeySchema.optional(),
});

export function messageRoutes(runtime: Runtime): Router {
  const router = Router();
  const { config } = runtime;
  const limit = rateLimit(runtime.redis, config.QUEUE_PREFIX, 'messages', config.RATE_LIMIT_MESSAGES_PER_MINUTE, 60_000);
  router.post('/v1/messages', limit, async (req, res) => {
    const body = parse(postMessageBody, req.body);
    // Characters as people count them (code points), not UTF-16 units: an emoji is one.
    if ([...body.text].length > MAX_MESSAGE_CHARS) {
      throw new HttpError(413, 'message_too_long', `the message is over ${MAX_MESSAGE_CHARS} characters`);
    }
    const submitted = await submitMessage(runtime, {
      userId: userOf(req),
      sessionKey: body.session_key ?? MAIN_SESSION_KEY,
      text: body.text,
    });
    res.status(202).json(submitted);
  });
  return router;
}
