import { addJob, jobId, type JobData, type Queues, type Runtime } from '@assistant/shared';
import { directAddress } from './channel-types';

/**
 * Queues the second try of a notice WhatsApp refused outside its 24-hour window
 * (docs/channels.md#delivery). Its id comes from the notice's own job id, whether the send's
 * answer or a status webhook reported the refusal, so a redelivered status adds nothing.
 */
export async function queueNoticeResend(
  queues: Pick<Queues, 'deliveries'>,
  noticeJobId: string,
  data: JobData<'deliveries', 'resend-notice'>,
): Promise<void> {
  await addJob(queues, 'deliveries', 'resend-notice', data, { jobId: jobId('resend-notice', noticeJobId) });
}

/**
 * A WhatsApp message that a status webhook reports refused outside the window: a notice's is sent
 * again from its recorded text; another (a turn's answer that waited more than a day for an
 * approval) is only logged. One that is not ours, or whose user was erased, is left alone.
 */
export async function resendRefusedMessage(runtime: Runtime, providerMessageId: string): Promise<void> {
  // Sent at a BSUID before the person's number showed, a notice is theirs still: the resend goes to their address now.
  const found = await runtime.db.query<{ delivery_key: string; address: string; notice: string | null; user_id: string }>(
    `SELECT d.delivery_key, i.external_id AS address, d.notice, i.user_id FROM deliveries d
     JOIN channel_identities i ON i.channel = d.channel AND (i.external_id = d.recipient OR i.bsuid = d.recipient)
     WHERE d.channel = 'whatsapp' AND d.provider_message_id = $1 LIMIT 1`,
    [providerMessageId],
  );
  const row = found.rows[0];
  if (!row) return;
  if (row.notice === null) {
    runtime.logger.warn(
      { deliveryKey: row.delivery_key },
      'WhatsApp refused a message sent outside the 24-hour window: only notices are sent again',
    );
    return;
  }
  const data = { userId: row.user_id, to: directAddress('whatsapp', row.address), text: row.notice };
  await queueNoticeResend(runtime.queues, row.delivery_key, data);
}
