import { z } from 'zod';
import { telegramUpdate } from '../channels/telegram/telegram.schemas';
import { verifyQuery, whatsappWebhook } from '../channels/whatsapp/whatsapp.schemas';
import { failure, type ApiRoute } from './api-route';
import * as shape from './api-schemas';

/** Health, metrics and the channel webhooks: outside /v1, no API key. */
export const publicApiRoutes: ApiRoute[] = [
  {
    method: 'get',
    path: '/healthz',
    tag: 'health',
    summary: 'Liveness: 200 while the process runs',
    auth: 'none',
    responses: { 200: { description: 'running', schema: shape.healthResponse } },
  },
  {
    method: 'get',
    path: '/readyz',
    tag: 'health',
    summary: 'Readiness: 200 only if Redis and PostgreSQL answer within 1 s',
    auth: 'none',
    responses: {
      200: { description: 'ready', schema: shape.healthResponse },
      503: { description: 'names what did not answer', schema: shape.healthResponse },
    },
  },
  {
    method: 'get',
    path: '/metrics',
    tag: 'health',
    summary: 'Prometheus metrics: HTTP, event streams, queue depths, turns, model and tool calls',
    auth: 'none',
    responses: { 200: { description: 'Prometheus text format', contentType: 'text/plain', schema: z.string() } },
  },
  {
    method: 'post',
    path: '/webhooks/telegram',
    tag: 'channels',
    summary: 'Telegram Bot API updates',
    description:
      'Served while TELEGRAM_BOT_TOKEN and TELEGRAM_WEBHOOK_SECRET are set (404 otherwise); requires the ' +
      '`X-Telegram-Bot-Api-Secret-Token` header.',
    auth: 'none',
    body: telegramUpdate,
    responses: { 200: { description: 'accepted', schema: z.object({ ok: z.literal(true) }) }, 401: failure('wrong or missing secret token') },
  },
  {
    method: 'get',
    path: '/webhooks/whatsapp',
    tag: 'channels',
    summary: 'WhatsApp Cloud API subscription check',
    auth: 'none',
    query: verifyQuery,
    responses: { 200: { description: 'the challenge, echoed', contentType: 'text/plain', schema: z.string() }, 403: failure('verification failed') },
  },
  {
    method: 'post',
    path: '/webhooks/whatsapp',
    tag: 'channels',
    summary: 'WhatsApp Cloud API events',
    description: 'Served while the WhatsApp settings are set (404 otherwise); requires `X-Hub-Signature-256` over the raw body.',
    auth: 'none',
    body: whatsappWebhook,
    responses: { 200: { description: 'accepted' }, 401: failure('missing or invalid signature') },
  },
];
