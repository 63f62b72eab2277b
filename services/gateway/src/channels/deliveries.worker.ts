import { DelayedError, UnrecoverableError, Worker, type Job } from 'bullmq';
import { jobProcessor, startWorker, type ChannelAddress, type JobProcessor, type Redis, type Runtime } from '@assistant/shared';
import { enabledChannels, type ChannelClients } from './channel-clients';
import { ChannelApiError, recipientOf, type ChannelSender, type OutboundPart } from './channel-types';
import { Transcriber } from '../llm/transcriber';
import { lastUsedAddress } from './identities';
import { outboundParts, renderTurnEvent, type OutboundMessage } from './outbound';
import { createTranscriptionHandler } from './voice-transcription.job';

/** A provider that keeps answering 429 is given up on after this many pickups of one job. */
const MAX_STARTS = 50;
/** How soon a delivery a gateway without its channel handed back is taken again. */
const HAND_BACK_MS = 200;

/**
 * The `deliveries` processor (docs/channels.md#delivery). Each sent part is recorded under (job id, part
 * index) with the provider's message id, so a retry, a stalled job taken over or a re-queued
 * job sends only the parts still missing. A crash between the provider's answer and that
 * record can repeat one part: no provider offers an idempotency key to close that gap.
 */
export function createDeliveryProcessor(runtime: Runtime, clients: ChannelClients): JobProcessor<'deliveries'> {
  const { db, logger } = runtime;

  async function sendParts(key: string, to: ChannelAddress, sender: ChannelSender, parts: OutboundPart[]): Promise<void> {
    const done = await db.query<{ part: number }>('SELECT part FROM deliveries WHERE delivery_key = $1', [key]);
    const sent = new Set(done.rows.map((row) => row.part));
    const recipient = recipientOf(to);
    // In order, one at a time: part 2 never overtakes part 1, even across retries.
    for (const [index, part] of parts.entries()) {
      if (sent.has(index)) continue;
      const providerId = await sender.send(to, part);
      await db.query(
        `INSERT INTO deliveries (delivery_key, part, channel, recipient, provider_message_id)
         VALUES ($1, $2, $3, $4, $5) ON CONFLICT DO NOTHING`,
        [key, index, to.channel, recipient, providerId],
      );
    }
  }

  async function deliver(job: Job, token: string | undefined, to: ChannelAddress, message: OutboundMessage): Promise<void> {
    const sender = clients[to.channel];
    if (!sender) {
      // Every gateway takes deliveries: one without this channel's settings (a copy set up apart,
      // a settings change rolling out) hands the job back for a gateway that has them.
      if (job.attemptsStarted < MAX_STARTS) {
        await job.moveToDelayed(Date.now() + HAND_BACK_MS, token);
        throw new DelayedError();
      }
      throw new UnrecoverableError(`${to.channel} is not configured on the gateways that took this delivery`);
    }
    try {
      await sendParts(job.id as string, to, sender, outboundParts(message, sender.limits, sender.formatMarkdown));
    } catch (error) {
      if (!(error instanceof ChannelApiError)) throw error;
      if (error.status === 429 && error.retryAfterMs !== undefined && job.attemptsStarted < MAX_STARTS) {
        // Rescheduled rather than slept on: the worker slot is free meanwhile.
        await job.moveToDelayed(Date.now() + error.retryAfterMs, token);
        throw new DelayedError();
      }
      if (error.status >= 400 && error.status < 500 && error.status !== 429) throw new UnrecoverableError(error.message);
      throw error;
    }
  }

  return jobProcessor('deliveries', {
    'turn-event': async (data, job, token) => deliver(job, token, data.to, await renderTurnEvent(db, data)),
    reply: ({ to, text }, job, token) => deliver(job, token, to, { text }),
    notify: async ({ userId, text }, job, token) => {
      const to = await lastUsedAddress(db, userId, enabledChannels(clients));
      if (to) await deliver(job, token, to, { text });
      else logger.info({ jobId: job.id }, 'notification skipped: the user has no channel identity');
    },
    // Inbound media rides on this queue: it needs the channel's token and retries like a delivery.
    transcribe: createTranscriptionHandler(runtime, new Transcriber(runtime.config)),
  });
}

/** The deliveries worker of a gateway process, on its own blocking connection. */
export function startDeliveriesWorker(runtime: Runtime, connection: Redis, clients: ChannelClients): Worker {
  return startWorker(runtime, createDeliveryProcessor(runtime, clients), connection);
}
