import { fixture, whatsappStatus, whatsappText } from '../../../../../tests/helpers/channel-fixtures';
import { whatsappWebhook } from './whatsapp.schemas';
import { failedSends } from './whatsapp.statuses';

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

describe('failedSends', () => {
  it('names a message whose status failed for the 24-hour window', () => {
    expect(failedSends(failed([reEngagement]))).toEqual({ outsideWindow: [statusId], others: [] });
  });

  it("reports every other failure's code and title, and nothing of the recipient", () => {
    expect(failedSends(failed([{ code: 131026, title: 'Message undeliverable', error_data: { details: 'x' } }]))).toEqual({
      outsideWindow: [],
      others: [{ code: 131026, title: 'Message undeliverable' }],
    });
    expect(failedSends(failed([])).others).toEqual([{ code: undefined, title: undefined }]);
    expect(failedSends(failed([{ title: 'no code' }])).others).toEqual([{ code: undefined, title: 'no code' }]);
  });

  it('ignores statuses that did not fail, and messages', () => {
    expect(failedSends(whatsappWebhook.parse(whatsappStatus))).toEqual({ outsideWindow: [], others: [] });
    expect(failedSends(whatsappWebhook.parse(whatsappText))).toEqual({ outsideWindow: [], others: [] });
  });
});
