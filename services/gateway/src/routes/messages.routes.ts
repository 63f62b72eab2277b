import { Router } from 'express';
import { z } from 'zod';
import { MAIN_SESSION_KEY, sessionKeySchema, type Runtime } from '@assistant/shared';
import { userOf } from '../http/auth';
import { HttpError } from '../http/errors';
import { parse } from '../http/validate';
import { MESSAGE_RATE, rateLimit } from '../http/rate-limit';
import { IF_BUSY } from '../turns/busy-session';
import { submitMessage } from '../turns/submit-message';

export const MAX_MESSAGE_CHARS = 16_000;

// Unknown fields are ignored rather than refused: clients may send more than we read.
export const postMessageBody = z.object({
  text: z.string().refine((text) => text.trim() !== '', 'must not be empty'),
  session_key: sessionKeySchema.optional(),
  if_busy: z.enum(IF_BUSY).optional(),
});

export function messageRoutes(runtime: Runtime): Router {
  const router = Router();
  const { config } = runtime;
  const limit = rateLimit(
    runtime.redis,
    config.QUEUE_PREFIX,
    MESSAGE_RATE.name,
    config.RATE_LIMIT_MESSAGES_PER_MINUTE,
    MESSAGE_RATE.windowMs,
  );
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
      ifBusy: body.if_busy ?? 'queue',
    });
    res.status(202).json(submitted);
  });
  return router;
}
