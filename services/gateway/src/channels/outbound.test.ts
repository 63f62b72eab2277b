import { randomUUID } from 'node:crypto';
import { approvalButtons } from './buttons';
import { outboundParts, renderTurnEvent } from './outbound';
import { TelegramClient } from './telegram/telegram.client';

const telegram = { text: 4_000, withButtons: 4_000 };
const whatsapp = { text: 4_000, withButtons: 1_000 };

describe('outboundParts', () => {
  it('splits a 10,000-character answer into parts under 4,096, in order, losing nothing', () => {
    const words = Array.from({ length: 2_000 }, (_, i) => `w${String(i).padStart(4, '0')}`);
    const text = words.join(' ').slice(0, 10_000);
    const parts = outboundParts({ text }, telegram);
    expect(parts.length).toBeGreaterThan(2);
    for (const part of parts) expect(part.text.length).toBeLessThan(4_096);
    expect(parts.map((part) => part.text).join(' ')).toBe(text);
  });

  it('puts buttons on the last part only, within the interactive body limit', () => {
    const buttons = approvalButtons(randomUUID());
    const parts = outboundParts({ text: 'x '.repeat(1_500), buttons }, whatsapp);
    expect(parts.length).toBe(3);
    expect(parts.every((part) => part.text.length <= 1_000)).toBe(true);
    expect(parts.slice(0, -1).some((part) => part.buttons)).toBe(false);
    expect(parts.at(-1)?.buttons).toEqual(buttons);
  });

  it('sends nothing for an empty answer', () => {
    expect(outboundParts({ text: '  ' }, telegram)).toEqual([]);
  });

  it('leaves out a Telegram part with nothing to read, which Telegram refuses as empty', () => {
    const { formatMarkdown } = new TelegramClient('http://telegram.invalid', 'token');
    expect(outboundParts({ text: '```\n```', markdown: true }, telegram, formatMarkdown)).toEqual([]);
    expect(outboundParts({ text: 'Done.\n\n```\n```', markdown: true }, telegram, formatMarkdown)).toEqual([
      { text: 'Done.', html: 'Done.\n\n<pre><code></code></pre>' },
    ]);
  });

  it('sends a template message as one part whatever its length: its client fits the parameter', () => {
    const template = { name: 'reminder_notice', language: 'en' };
    expect(outboundParts({ text: 'x '.repeat(3_000), template }, whatsapp)).toEqual([{ text: 'x '.repeat(3_000), template }]);
    expect(outboundParts({ text: ' ', template }, whatsapp)).toEqual([]);
  });
});

describe('renderTurnEvent', () => {
  const errorEvent = (code: string, message: string) =>
    renderTurnEvent(undefined as never, {
      turnId: randomUUID(),
      to: { channel: 'telegram', chat_id: '42' },
      event: { type: 'error', code, message },
    });

  it("shows a disabled account's error as written, not as a failure to try again", async () => {
    const disabled = 'This account is disabled, so the assistant cannot answer.';
    expect(await errorEvent('user_disabled', disabled)).toEqual({ text: disabled });
    expect((await errorEvent('model_error', 'upstream said 500')).text).toContain('Please try again');
  });
});
