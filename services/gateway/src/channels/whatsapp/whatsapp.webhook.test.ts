import { createHmac } from 'node:crypto';
import { telegramSecretValid } from '../telegram/telegram.webhook';
import { whatsappSignatureValid } from './whatsapp.webhook';

const SECRET = 'app-secret-for-tests';
const body = Buffer.from(JSON.stringify({ object: 'whatsapp_business_account', entry: [] }));
const sign = (raw: Buffer, secret = SECRET) => `sha256=${createHmac('sha256', secret).update(raw).digest('hex')}`;

describe('whatsappSignatureValid', () => {
  it('accepts the HMAC-SHA256 of the raw body, in either hex case', () => {
    expect(whatsappSignatureValid(body, sign(body), SECRET)).toBe(true);
    const hex = sign(body).slice('sha256='.length);
    expect(whatsappSignatureValid(body, `sha256=${hex.toUpperCase()}`, SECRET)).toBe(true);
  });

  it('refuses a missing, empty or malformed header', () => {
    for (const header of [undefined, '', 'sha256=', 'sha1=abc', sign(body).slice(7), `${sign(body)}00`]) {
      expect(whatsappSignatureValid(body, header, SECRET)).toBe(false);
    }
  });

  it('refuses a signature made with another secret', () => {
    expect(whatsappSignatureValid(body, sign(body, 'another-secret'), SECRET)).toBe(false);
  });

  it('refuses a body altered after signing, even by re-serialising the same JSON', () => {
    const altered = Buffer.from(body.toString().replace('[]', '[{}]'));
    expect(whatsappSignatureValid(altered, sign(body), SECRET)).toBe(false);
    const reformatted = Buffer.from(JSON.stringify(JSON.parse(body.toString()), null, 2));
    expect(whatsappSignatureValid(reformatted, sign(body), SECRET)).toBe(false);
  });
});

describe('telegramSecretValid', () => {
  it('accepts only the configured secret', () => {
    expect(telegramSecretValid('s3cret_-token', 's3cret_-token')).toBe(true);
    expect(telegramSecretValid('s3cret_-tokem', 's3cret_-token')).toBe(false);
    expect(telegramSecretValid('s3cret', 's3cret_-token')).toBe(false);
    expect(telegramSecretValid('', 's3cret_-token')).toBe(false);
    expect(telegramSecretValid(undefined, 's3cret_-token')).toBe(false);
  });
});
