import { parseConfig } from '@assistant/shared';
import { createChannelClients, enabledChannels, incompleteChannels } from './channel-clients';

const TELEGRAM = { TELEGRAM_BOT_TOKEN: '1:bot-token-value', TELEGRAM_WEBHOOK_SECRET: 'webhook-secret-value' };
const WHATSAPP = {
  WHATSAPP_ACCESS_TOKEN: 'access-token-value',
  WHATSAPP_APP_SECRET: 'app-secret-value',
  WHATSAPP_VERIFY_TOKEN: 'verify-token-value',
  WHATSAPP_PHONE_NUMBER_ID: '1234',
};

describe('incompleteChannels', () => {
  it('says nothing of a channel set up fully or not at all', () => {
    expect(incompleteChannels(parseConfig({}))).toEqual([]);
    const config = parseConfig({ ...TELEGRAM, ...WHATSAPP });
    expect(incompleteChannels(config)).toEqual([]);
    expect(enabledChannels(createChannelClients(config))).toEqual(['telegram', 'whatsapp']);
  });

  it('names the settings a half set-up channel lacks, and none of the values', () => {
    const { WHATSAPP_VERIFY_TOKEN: _v, ...whatsapp } = WHATSAPP;
    const config = parseConfig({ TELEGRAM_BOT_TOKEN: TELEGRAM.TELEGRAM_BOT_TOKEN, ...whatsapp, WHATSAPP_PHONE_NUMBER_ID: ' ' });
    expect(enabledChannels(createChannelClients(config))).toEqual([]);
    const lines = incompleteChannels(config);
    expect(lines).toEqual([
      'telegram is off: TELEGRAM_WEBHOOK_SECRET not set',
      'whatsapp is off: WHATSAPP_VERIFY_TOKEN, WHATSAPP_PHONE_NUMBER_ID not set',
    ]);
    expect(lines.join('\n')).not.toMatch(/value/);
  });
});
