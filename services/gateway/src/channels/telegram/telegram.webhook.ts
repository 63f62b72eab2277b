import express, { type RequestHandler, type Router } from 'express';
import { z } from 'zod';
import type { Runtime } from '@assistant/shared';
import { apiRouter } from '../../http/api-router';
import { secretsEqual } from '../../http/auth';
import { HttpError } from '../../http/errors';
import { defineRoutes, failure } from '../../openapi/api-route';
import { acceptInbound, refusedPress, type InboundResult } from '../inbound';
import { WEBHOOK_BODY_LIMIT } from '../channel-types';
import { groupUpgrade, recordGroupUpgrade } from './group-upgrades';
import type { TelegramClient } from './telegram.client';
import { telegramInbound } from './telegram.inbound';
import { telegramUpdate } from './telegram.schemas';
import { readTelegramUpdate } from './telegram.update';

export const telegramApi = defineRoutes({
  telegramUpdate: {
    method: 'post',
    path: '/webhooks/telegram',
    tag: 'channels',
    summary: 'Telegram Bot API updates',
    description:
      'Served while TELEGRAM_BOT_TOKEN and TELEGRAM_WEBHOOK_SECRET are set (404 otherwise); requires the ' +
      '`X-Telegram-Bot-Api-Secret-Token` header.',
    auth: 'none',
    body: telegramUpdate,
    parsesOwnInput: true,
    responses: {
      200: { description: 'accepted', schema: z.object({ ok: z.literal(true) }) },
      401: failure('wrong or missing secret token'),
    },
  },
});

/** docs/channels.md#webhooks: the header must equal TELEGRAM_WEBHOOK_SECRET, compared in constant time. */
export function telegramSecretValid(given: string | undefined, secret: string): boolean {
  return given !== undefined && secretsEqual(given, secret);
}

function requireSecret(secret: string): RequestHandler {
  return (req, _res, next) => {
    if (!telegramSecretValid(req.get('x-telegram-bot-api-secret-token'), secret)) {
      throw new HttpError(401, 'unauthorized', 'missing or wrong X-Telegram-Bot-Api-Secret-Token');
    }
    next();
  };
}

/** The little toast Telegram shows after a button press; none when the press got a reply of its own (a disabled account's). */
function callbackText(result: InboundResult): string | undefined {
  if (result.replied) return undefined;
  const refused = refusedPress(result);
  if (refused !== undefined) return refused;
  if (result.decision?.kind === 'approval') return result.decision.approve ? 'Approved' : 'Rejected';
  return result.decision?.proceed ? 'Continuing' : 'Stopped';
}

/**
 * `POST /webhooks/telegram`: answered 200 once the update is durably accepted (or deliberately
 * ignored); an error answers 5xx so Telegram delivers the update again.
 */
export function telegramWebhook(runtime: Runtime, client: TelegramClient, secret: string, username?: string): Router {
  // TELEGRAM_BOT_USERNAME, else getMe once per process (a failed lookup is retried next time).
  let botUsername: Promise<string> | undefined = username ? Promise.resolve(username.replace(/^@/, '')) : undefined;
  const lookUpUsername = () => {
    if (!botUsername) {
      botUsername = client.getMe().then((me) => me.username ?? '');
      botUsername.catch(() => {
        botUsername = undefined;
      });
    }
    return botUsername;
  };

  return apiRouter(telegramApi, {
    telegramUpdate: {
      // JSON whatever the content type, as the rest of the API reads it; the secret is checked before the body is read.
      use: [requireSecret(secret), express.json({ limit: WEBHOOK_BODY_LIMIT, type: () => true })],
      handle: async (req, res) => {
        const update = readTelegramUpdate(req.body);
        const upgrade = groupUpgrade(update);
        // A service message, never answered (telegramInbound ignores it): the group's sessions follow the upgrade.
        if (upgrade) await recordGroupUpgrade(runtime.db, upgrade);
        const message = await telegramInbound(update, { id: client.botId, username: lookUpUsername }, { vision: runtime.config.VISION });
        if (message) {
          const result = await acceptInbound(runtime, message);
          const query = update.callback_query;
          // A redelivered press was answered by its first delivery: a second toast would be something new.
          if (query && !result.redelivered) {
            // Only the spinner on the user's button depends on this; the decision is already made.
            await client.answerCallbackQuery(query.id, callbackText(result)).catch((error: unknown) => {
              runtime.logger.warn({ err: error }, 'answerCallbackQuery failed');
            });
          }
        }
        res.json({ ok: true });
      },
    },
  });
}
