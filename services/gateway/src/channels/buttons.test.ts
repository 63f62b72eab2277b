import { randomUUID } from 'node:crypto';
import { approvalButtons, buttonData, continueButtons, MAX_BUTTON_DATA_BYTES, parseButtonData } from './buttons';

describe('button data', () => {
  it('fits Telegram callback_data (64 bytes) and WhatsApp titles (20 characters)', () => {
    for (const button of [...approvalButtons(randomUUID()), ...continueButtons(randomUUID())]) {
      expect(Buffer.byteLength(button.id, 'utf8')).toBeLessThanOrEqual(MAX_BUTTON_DATA_BYTES);
      expect([...button.title].length).toBeLessThanOrEqual(20);
    }
  });

  it('reads back what it wrote', () => {
    const approvalId = randomUUID();
    const turnId = randomUUID();
    expect(parseButtonData(buttonData({ kind: 'approval', approvalId, approve: true }))).toEqual({
      kind: 'approval',
      approvalId,
      approve: true,
    });
    expect(parseButtonData(buttonData({ kind: 'approval', approvalId, approve: false }))).toEqual({
      kind: 'approval',
      approvalId,
      approve: false,
    });
    expect(parseButtonData(buttonData({ kind: 'continue', turnId, proceed: true }))).toEqual({ kind: 'continue', turnId, proceed: true });
  });

  it('ignores anything else', () => {
    for (const data of ['', 'a:not-a-uuid:y', `x:${randomUUID()}:y`, `a:${randomUUID()}:maybe`, '<whatever>']) {
      expect(parseButtonData(data)).toBeUndefined();
    }
  });
});
