import type { AddressInfo } from 'node:net';
import express from 'express';
import { parseConfig, type Runtime } from '@assistant/shared';
import { channelRoutes } from './channel.routes';

const TELEGRAM = { TELEGRAM_BOT_TOKEN: '1:t', TELEGRAM_WEBHOOK_SECRET: 'secret' };
const WHATSAPP = { WHATSAPP_ACCESS_TOKEN: 'a', WHATSAPP_APP_SECRET: 'b', WHATSAPP_VERIFY_TOKEN: 'c', WHATSAPP_PHONE_NUMBER_ID: '1' };

/** Status codes of the two webhooks on a gateway configured with `env` (no body: a mounted route answers 401/403). */
async function statuses(env: Record<string, string>): Promise<{ telegram: number; whatsappGet: number; whatsappPost: number }> {
  const runtime = { config: parseConfig(env) } as Runtime;
  const server = express().use(channelRoutes(runtime)).listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  const url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  try {
    return {
      telegram: (await fetch(`${url}/webhooks/telegram`, { method: 'POST' })).status,
      whatsappGet: (await fetch(`${url}/webhooks/whatsapp`)).status,
      whatsappPost: (await fetch(`${url}/webhooks/whatsapp`, { method: 'POST' })).status,
    };
  } finally {
    server.close();
  }
}

describe('channelRoutes', () => {
  it('mounts a channel only when all of its settings are present', async () => {
    expect(await statuses({})).toEqual({ telegram: 404, whatsappGet: 404, whatsappPost: 404 });
    expect(await statuses({ TELEGRAM_BOT_TOKEN: '1:t' })).toMatchObject({ telegram: 404 });
    expect(await statuses({ TELEGRAM_WEBHOOK_SECRET: 'secret' })).toMatchObject({ telegram: 404 });
    for (const missing of Object.keys(WHATSAPP)) {
      const env = Object.fromEntries(Object.entries(WHATSAPP).filter(([key]) => key !== missing));
      expect(await statuses(env)).toMatchObject({ whatsappGet: 404, whatsappPost: 404 });
    }
    expect(await statuses({ ...TELEGRAM, ...WHATSAPP })).toEqual({ telegram: 401, whatsappGet: 403, whatsappPost: 401 });
  });
});
