import type { Router } from 'express';
import { z } from 'zod';
import { MAIN_SESSION_KEY, sessionKeySchema, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { HttpError } from '../http/errors';
import { MESSAGE_RATE, rateLimit, unhitRateLimit } from '../http/rate-limit';
import { defineRoutes, failure } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';
import { IF_BUSY } from '../turns/busy-session';
import { submitMessage } from '../turns/submit-message';

export const MAX_MESSAGE_CHARS = 16_000;

// Unknown fields are ignored rather than refused: clients may send more than we read.
export const postMessageBody = z.object({
  text: z.string().refine((text) => text.trim() !== '', 'must not be empty'),
  session_key: sessionKeySchema.optional(),
  if_busy: z.enum(IF_BUSY).optional(),
});

export const messageApi = defineRoutes({
  postMessage: {
    method: 'post',
    path: '/v1/messages',
    tag: 'turns',
    summary: 'Send a message: starts a turn',
    description:
      'Answers at once with the turn; follow it on `events_url`. Without `session_key` the message goes to the main ' +
      `session \`agent:main:main\`. An empty text answers 400; one over ${MAX_MESSAGE_CHARS} characters, 413. ` +
      'When the session is busy, `if_busy` decides: `queue` (default) waits its turn; `merge` joins the queued turn ' +
      '(its id is answered) or queues one; `reject` answers 409 `session_busy`; `interrupt` cancels the running turn ' +
      '(a started tool finishes) and starts this one at once.',
    auth: 'user',
    body: postMessageBody,
    example: { text: 'create folder Work', session_key: 'agent:main:api:direct:docs' },
    responses: {
      202: { description: 'the turn is queued', schema: shape.submittedResponse },
      409: failure('`if_busy: reject` and the session is busy (`session_busy`)'),
      413: failure(`the message is over ${MAX_MESSAGE_CHARS} characters, or the body over 1 MiB`),
      429: failure('over RATE_LIMIT_MESSAGES_PER_MINUTE; see Retry-After'),
    },
  },
});

export function messageRoutes(runtime: Runtime): Router {
  const { config } = runtime;
  const limit = rateLimit(
    runtime.redis,
    config.QUEUE_PREFIX,
    MESSAGE_RATE.name,
    config.RATE_LIMIT_MESSAGES_PER_MINUTE,
    MESSAGE_RATE.windowMs,
  );
  return apiRouter(messageApi, {
    postMessage: async (req, res, { body }) => {
      // Characters as people count them (code points), not UTF-16 units: an emoji is one.
      if ([...body.text].length > MAX_MESSAGE_CHARS) {
        throw new HttpError(413, 'message_too_long', `the message is over ${MAX_MESSAGE_CHARS} characters`);
      }
      await limit(req);
      const submitted = await submitMessage(runtime, {
        userId: userOf(req),
        sessionKey: body.session_key ?? MAIN_SESSION_KEY,
        text: body.text,
        ifBusy: body.if_busy ?? 'queue',
      }).catch(async (error: unknown) => {
        // Refused as busy (`if_busy: reject`), the message is neither stored nor answered: like one
        // refused as invalid, it uses up none of the rate, so a client may ask again soon.
        if (error instanceof HttpError && error.code === 'session_busy' && config.RATE_LIMIT_MESSAGES_PER_MINUTE > 0) {
          await unhitRateLimit(runtime.redis, config.QUEUE_PREFIX, MESSAGE_RATE.name, userOf(req));
        }
        throw error;
      });
      res.status(202).json(submitted);
    },
  });
}
