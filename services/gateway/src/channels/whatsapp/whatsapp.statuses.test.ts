import { fixture, whatsappStatus, whatsappText } from '../../../../../tests/helpers/channel-fixtures';
import { whatsappWebhook } from './whatsapp.schemas';
import { refusedOutsideWindow } from './whatsapp.statuses';

/** The shared status fixture, as a `failed` status with these errors. */
function failed(errors: unknown[]) {
  const payload = fixture(whatsappStatus);
  Object.assign(payload.entry[0]?.changes[0]?.value.statuses[0] ?? {}, { status: 'failed', errors });
  return whatsappWebhook.parse(payload);
}
const reEngagement = {
  code: 131047,
  title: 'Re-engagement message',
  message: 'Re-engagement message',
  error_data: { details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.' },
};
const statusId = whatsappStatus.entry[0]?.changes[0]?.value.statuses[0]?.id;

describe('refusedOutsideWindow', () => {
  it('names a message whose status failed for the 24-hour window', () => {
    expect(refusedOutsideWindow(failed([reEngagement]))).toEqual([statusId]);
  });

  it('ignores every other status: delivered, failed for another reason, failed without errors, and messages', () => {
    expect(refusedOutsideWindow(whatsappWebhook.parse(whatsappStatus))).toEqual([]);
    expect(refusedOutsideWindow(failed([{ code: 131026, title: 'Message undeliverable' }]))).toEqual([]);
    expect(refusedOutsideWindow(failed([]))).toEqual([]);
    expect(refusedOutsideWindow(failed([{ title: 'no code' }]))).toEqual([]);
    expect(refusedOutsideWindow(whatsappWebhook.parse(whatsappText))).toEqual([]);
  });
});
