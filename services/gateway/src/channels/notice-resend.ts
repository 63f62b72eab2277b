import { addJob, jobId, runAgainIn, type JobData, type JobHandler, type Queues, type Runtime } from '@assistant/shared';
import { directAddress } from './channel-types';

/**
 * A status that names no recorded message is looked up again this many times in all, this far
 * apart: Meta can report a send refused before the gateway that sent it has recorded its answer
 * (a few milliseconds, unless the database is slow), and a message never recorded is not ours.
 */
const RECHECKS = 5;
const RECHECK_MS = 2_000;

/**
 * Queues the second try of a notice refused until its user writes in that chat (WhatsApp outside
 * its 24-hour window, Telegram never opened; docs/channels.md#delivery). Its id comes from the notice's own job id, whether the send's
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
 * approval) is only logged. One not recorded yet is looked for again by a delayed job, whose id
 * is the message's, so a redelivered status adds none while it is kept.
 */
export async function resendRefusedMessage(runtime: Runtime, providerMessageId: string): Promise<void> {
  if (await resendIfRecorded(runtime, providerMessageId)) return;
  await addJob(
    runtime.queues,
    'deliveries',
    'recheck-refusal',
    { providerMessageId },
    { jobId: jobId('recheck-refusal', providerMessageId), delay: RECHECK_MS },
  );
}

/** The `recheck-refusal` job: looks again, waiting RECHECK_MS between tries, until RECHECKS tries found nothing. */
export function createRefusalRecheck(runtime: Runtime): JobHandler<'deliveries', 'recheck-refusal'> {
  return async ({ providerMessageId }, job, token) => {
    if (await resendIfRecorded(runtime, providerMessageId)) return;
    // The webhook's own look counts as the first try.
    if (job.attemptsStarted + 1 >= RECHECKS) {
      return runtime.logger.info(
        { providerMessageId },
        'a WhatsApp message reported refused outside the window is not ours: nothing sent again',
      );
    }
    return runAgainIn(job, token, RECHECK_MS);
  };
}

/** Resends (or logs) the refused message if it is recorded; false if no delivery of ours (of a user not erased) has its id. */
async function resendIfRecorded(runtime: Runtime, providerMessageId: string): Promise<boolean> {
  // Sent at a BSUID before the person's number showed, a notice is theirs still: the resend goes to their address now.
  const found = await runtime.db.query<{ delivery_key: string; address: string; notice: string | null; user_id: string }>(
    `SELECT d.delivery_key, i.external_id AS address, d.notice, i.user_id FROM deliveries d
     JOIN channel_identities i ON i.channel = d.channel AND (i.external_id = d.recipient OR i.bsuid = d.recipient)
     WHERE d.channel = 'whatsapp' AND d.provider_message_id = $1 LIMIT 1`,
    [providerMessageId],
  );
  const row = found.rows[0];
  if (!row) return false;
  if (row.notice === null) {
    runtime.logger.warn(
      { deliveryKey: row.delivery_key },
      'WhatsApp refused a message sent outside the 24-hour window: only notices are sent again',
    );
    return true;
  }
  const data = { userId: row.user_id, to: directAddress('whatsapp', row.address), text: row.notice };
  await queueNoticeResend(runtime.queues, row.delivery_key, data);
  return true;
}
