import type { Config } from '@assistant/shared';
import type { ChannelName } from './channel-types';
import { TelegramClient } from './telegram/telegram.client';
import { WhatsAppClient } from './whatsapp/whatsapp.client';

/** The clients of the enabled channels: a channel with a setting missing has none. */
export interface ChannelClients {
  telegram?: TelegramClient;
  whatsapp?: WhatsAppClient;
}

export function createChannelClients(config: Config): ChannelClients {
  const clients: ChannelClients = {};
  if (config.TELEGRAM_BOT_TOKEN && config.TELEGRAM_WEBHOOK_SECRET) {
    clients.telegram = new TelegramClient(config.TELEGRAM_API_BASE_URL, config.TELEGRAM_BOT_TOKEN);
  }
  const { WHATSAPP_ACCESS_TOKEN, WHATSAPP_APP_SECRET, WHATSAPP_VERIFY_TOKEN, WHATSAPP_PHONE_NUMBER_ID } = config;
  if (WHATSAPP_ACCESS_TOKEN && WHATSAPP_APP_SECRET && WHATSAPP_VERIFY_TOKEN && WHATSAPP_PHONE_NUMBER_ID) {
    clients.whatsapp = new WhatsAppClient(config.WHATSAPP_API_BASE_URL, WHATSAPP_PHONE_NUMBER_ID, WHATSAPP_ACCESS_TOKEN);
  }
  return clients;
}

const REQUIRED = {
  telegram: ['TELEGRAM_BOT_TOKEN', 'TELEGRAM_WEBHOOK_SECRET'],
  whatsapp: ['WHATSAPP_ACCESS_TOKEN', 'WHATSAPP_APP_SECRET', 'WHATSAPP_VERIFY_TOKEN', 'WHATSAPP_PHONE_NUMBER_ID'],
} as const satisfies Record<ChannelName, readonly (keyof Config)[]>;

/**
 * A channel some of whose settings are set but not all stays off (its webhook answers 404), which
 * an operator who forgot one setting would otherwise learn only from the provider's failed
 * deliveries: one line per such channel, naming the settings missing (never a value).
 */
export function incompleteChannels(config: Config): string[] {
  return (Object.entries(REQUIRED) as [ChannelName, readonly (keyof Config)[]][]).flatMap(([channel, names]) => {
    const missing = names.filter((name) => !config[name]);
    return missing.length > 0 && missing.length < names.length ? [`${channel} is off: ${missing.join(', ')} not set`] : [];
  });
}

export function enabledChannels(clients: ChannelClients): ChannelName[] {
  return (Object.keys(clients) as ChannelName[]).filter((name) => clients[name] !== undefined);
}
