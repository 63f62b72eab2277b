import { OUTSIDE_WINDOW_CODE, webhookChanges, type WhatsAppWebhook } from './whatsapp.schemas';

/** What a webhook's `failed` statuses say: the sends refused outside the 24-hour window, and the rest. */
export interface FailedSends {
  /**
   * Ids of the messages refused for being sent outside the 24-hour window: the Cloud API accepts
   * such a message and reports its refusal only later, so it is sent again as a template.
   */
  outsideWindow: string[];
  /** Every other failure's error codes and titles (an operator's business: a blocked number, a bad template). */
  others: { code?: number; title?: string }[];
}

/** The failed sends a webhook reports; every other status (sent, delivered, read) is ignored. */
export function failedSends(payload: WhatsAppWebhook): FailedSends {
  const failed = webhookChanges(payload)
    .changes.flatMap((change) => change.value.statuses ?? [])
    .flatMap((status) => (status?.status === 'failed' ? [status] : []));
  const refused = (errors: { code?: number }[] = []) => errors.some((error) => error.code === OUTSIDE_WINDOW_CODE);
  return {
    outsideWindow: failed.filter((status) => refused(status.errors)).map((status) => status.id),
    others: failed
      .filter((status) => !refused(status.errors))
      .flatMap((status) => (status.errors?.length ? status.errors : [{}]))
      .map(({ code, title }) => ({ code, title })),
  };
}
