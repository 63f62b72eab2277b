import { createHmac } from 'node:crypto';
import express, { type Router } from 'express';
import { z } from 'zod';
import { addJob, jobId, type Runtime } from '@assistant/shared';
import { apiRouter } from '../../http/api-router';
import { secretsEqual } from '../../http/auth';
import { HttpError } from '../../http/errors';
import { cleanWebhookBody } from '../../http/input-guard';
import { parse } from '../../http/validate';
import { defineRoutes, failure } from '../../openapi/api-route';
import { acceptInbound, refusedPress, replyAllowed, type InboundResult } from '../inbound';
import { resendRefusedMessage } from '../notice-resend';
import { messagesWithoutSender, whatsappInbound } from './whatsapp.inbound';
import { verifyQuery, webhookChanges, whatsappWebhook as webhookSchema } from './whatsapp.schemas';
import { failedSends } from './whatsapp.statuses';

/**
 * Meta's webhook bodies can be up to 3 MB (a batch of messages and statuses); a lower limit would
 * refuse a real batch with 413 on every redelivery, losing all its messages.
 */
export const WHATSAPP_BODY_LIMIT = '3mb';

export const whatsappApi = defineRoutes({
  verifySubscription: {
    method: 'get',
    path: '/webhooks/whatsapp',
    tag: 'channels',
    summary: 'WhatsApp Cloud API subscription check',
    auth: 'none',
    query: verifyQuery,
    parsesOwnInput: true,
    responses: {
      200: { description: 'the challenge, echoed', contentType: 'text/plain', schema: z.string() },
      403: failure('verification failed'),
    },
  },
  receiveEvents: {
    method: 'post',
    path: '/webhooks/whatsapp',
    tag: 'channels',
    summary: 'WhatsApp Cloud API events',
    description: 'Served while the WhatsApp settings are set (404 otherwise); requires `X-Hub-Signature-256` over the raw body.',
    auth: 'none',
    body: webhookSchema,
    parsesOwnInput: true,
    responses: { 200: { description: 'accepted' }, 401: failure('missing or invalid signature'), 413: failure('the body is over 3 MiB') },
  },
});

/**
 * `X-Hub-Signature-256: sha256=<hex HMAC-SHA256 of the raw body with the app secret>`, checked
 * over the bytes received, in constant time. Anything else (missing, malformed) is false.
 */
export function whatsappSignatureValid(raw: Buffer, header: string | undefined, appSecret: string): boolean {
  const given = /^sha256=([0-9a-f]{64})$/i.exec(header?.trim() ?? '')?.[1];
  if (!given) return false;
  const expected = createHmac('sha256', appSecret).update(raw).digest('hex');
  return secretsEqual(given.toLowerCase(), expected);
}

export interface WhatsAppWebhookSettings {
  appSecret: string;
  verifyToken: string;
}

/**
 * WhatsApp has no toast for a button press, so one that changed nothing (already answered,
 * expired, someone else's) is answered with a short message, once: a redelivery was answered
 * the first time, and a press that got a reply of its own (a disabled account's) needs no other.
 */
async function answerRefusedPress(runtime: Runtime, result: InboundResult): Promise<void> {
  const refused = refusedPress(result);
  if (refused === undefined || result.redelivered || result.replied) return;
  // Words a press gets count against the message rate, as every reply without a turn does (inbound.ts).
  if (result.userId && !(await replyAllowed(runtime, result.userId))) return;
  const reply = { to: result.replyTo, text: refused, channelMessageId: result.rowId };
  await addJob(runtime.queues, 'deliveries', 'reply', reply, { jobId: jobId('refused', result.rowId) });
}

/** `GET /webhooks/whatsapp` (subscription check) and `POST /webhooks/whatsapp` (signed events). */
export function whatsappWebhook(runtime: Runtime, settings: WhatsAppWebhookSettings): Router {
  return apiRouter(whatsappApi, {
    verifySubscription: (req, res) => {
      const query = verifyQuery.safeParse(req.query);
      if (!query.success || !secretsEqual(query.data['hub.verify_token'], settings.verifyToken)) {
        throw new HttpError(403, 'forbidden', 'verification failed');
      }
      res.type('text/plain').send(query.data['hub.challenge']);
    },

    // The signature covers the exact bytes Meta sent, so this route reads them raw, never re-serialised.
    receiveEvents: {
      use: [express.raw({ type: () => true, limit: WHATSAPP_BODY_LIMIT })],
      handle: async (req, res) => {
        const raw = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
        if (!whatsappSignatureValid(raw, req.get('x-hub-signature-256'), settings.appSecret)) {
          throw new HttpError(401, 'unauthorized', 'missing or invalid X-Hub-Signature-256');
        }
        let json: unknown;
        try {
          // TextDecoder drops a leading byte order mark, as the API's JSON parser does; the signature covered it.
          json = JSON.parse(new TextDecoder().decode(raw));
        } catch {
          throw new HttpError(400, 'invalid_json', 'the request body is not valid JSON');
        }
        const payload = parse(webhookSchema, cleanWebhookBody(json));
        const { unknownParts } = webhookChanges(payload);
        if (unknownParts > 0) runtime.logger.warn({ unknownParts }, 'whatsapp webhook parts of an unknown shape are left out');
        const unanswerable = messagesWithoutSender(payload);
        if (unanswerable.length > 0) {
          runtime.logger.warn({ messageIds: unanswerable }, 'whatsapp messages with neither a phone number nor a BSUID are not answered');
        }
        // One by one, in order; a failure answers 5xx and Meta redelivers: the ones done are recognised.
        for (const message of whatsappInbound(payload, { vision: runtime.config.VISION })) {
          const result = await acceptInbound(runtime, message);
          if (message.content.kind === 'button') await answerRefusedPress(runtime, result);
        }
        // Status callbacks are ignored but for failed sends: one refused outside the 24-hour window
        // is sent again; any other failure is the operator's to see (codes and titles only, no number).
        const failed = failedSends(payload);
        for (const messageId of failed.outsideWindow) await resendRefusedMessage(runtime, messageId);
        if (failed.others.length > 0) runtime.logger.warn({ errors: failed.others }, 'whatsapp could not deliver a message');
        res.sendStatus(200);
      },
    },
  });
}
