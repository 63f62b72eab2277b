import { OUTSIDE_WINDOW_CODE, webhookChanges, type WhatsAppWebhook } from './whatsapp.schemas';

/**
 * Ids of the messages a webhook's status callbacks report failed for being sent outside the
 * 24-hour window: the Cloud API accepts such a message and reports its refusal only later. Every
 * other status (sent, delivered, read, a failure of another kind) is ignored.
 */
export function refusedOutsideWindow(payload: WhatsAppWebhook): string[] {
  return webhookChanges(payload)
    .changes.flatMap((change) => change.value.statuses ?? [])
    .flatMap((status) =>
      status?.status === 'failed' && status.errors?.some((error) => error.code === OUTSIDE_WINDOW_CODE) ? [status.id] : [],
    );
}
