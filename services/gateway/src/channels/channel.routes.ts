import { Router } from 'express';
import type { Runtime } from '@assistant/shared';
import { createChannelClients } from './channel-clients';
import { telegramWebhook } from './telegram/telegram.webhook';
import { whatsappWebhook } from './whatsapp/whatsapp.webhook';

/**
 * The webhooks of the enabled channels; a disabled channel's path falls through to 404. Mount
 * before the global JSON parser: the WhatsApp route must read its body raw.
 */
export function channelRoutes(runtime: Runtime): Router {
  const router = Router();
  const { config } = runtime;
  const clients = createChannelClients(config);
  if (clients.telegram && config.TELEGRAM_WEBHOOK_SECRET) {
    router.use(telegramWebhook(runtime, clients.telegram, config.TELEGRAM_WEBHOOK_SECRET, config.TELEGRAM_BOT_USERNAME));
  }
  if (clients.whatsapp && config.WHATSAPP_APP_SECRET && config.WHATSAPP_VERIFY_TOKEN) {
    const { WHATSAPP_APP_SECRET: appSecret, WHATSAPP_VERIFY_TOKEN: verifyToken } = config;
    router.use(whatsappWebhook(runtime, { appSecret, verifyToken }));
  }
  return router;
}
