import { UnrecoverableError, Worker, type Job } from 'bullmq';
import {
  jobProcessor,
  removeWhenDone,
  recipientOf,
  runAgainIn,
  startWorker,
  type ChannelAddress,
  type JobProcessor,
  type Redis,
  type Runtime,
} from '@assistant/shared';
import { enabledChannels, type ChannelClients } from './channel-clients';
import { ChannelApiError, OutsideWindowError, type ChannelSender, type OutboundPart } from './channel-types';
import { Transcriber } from '../llm/transcriber';
import { lastUsedAddress } from './identities';
import { outboundParts, renderTurnEvent, type OutboundMessage } from './outbound';
import { createTranscriptionHandler } from './voice-transcription.job';
import { DeliveryLines } from './delivery-line';
import { claimPart, ownerLive, type DeliveryOwner } from './delivery-owner';
import { createRefusalRecheck, queueNoticeResend } from './notice-resend';
import { isUserDisabled } from '../users/users.service';

/** A gateway without the delivery's channel hands it back at most this many times, this soon. */
const MAX_HAND_BACKS = 50;
const HAND_BACK_MS = 200;
/** How long a delivery's count of hand-backs is kept: far longer than its hand-backs take. */
const HAND_BACKS_TTL_MS = 24 * 3_600_000;
/** How long a part whose send failed is remembered when its record could not be dropped: past the job's retries (about 9 hours). */
const FAILED_SENDS_TTL_MS = 24 * 3_600_000;
/** How soon a delivery waiting behind an earlier one of its chat looks again. */
const BEHIND_MS = 500;
/** A 429's retry_after is honoured this long after queueing; past it, a 429 is a failed attempt, retried with backoff like a 5xx. */
const THROTTLED_AT_MOST_MS = 6 * 3_600_000;

/**
 * The `deliveries` processor (docs/channels.md#delivery). Each sent part is recorded under (job id, part
 * index) before it is sent, with the provider's message id once answered, so a retry, a stalled
 * job taken over or a re-queued job sends only the parts still missing, and a part cut off by a
 * crash is not sent twice (see sendParts). No provider offers an idempotency key that would close
 * the gap either way: a gateway killed in the instant between the record and the request loses
 * that part instead.
 */
export function createDeliveryProcessor(runtime: Runtime, clients: ChannelClients): JobProcessor<'deliveries'> {
  const { db, logger } = runtime;
  const lines = new DeliveryLines(runtime.redis, runtime.queues.deliveries, runtime.config.QUEUE_PREFIX);

  /**
   * Counts the job's hand-backs apart from its pickups (`attemptsStarted`), which its waits in its
   * chat's line add to: a delivery that waited behind a 429 must not fail once it is handed back.
   */
  async function handBacks(job: Job): Promise<number> {
    const key = `${runtime.config.QUEUE_PREFIX}:hand-backs:${job.id}`;
    const replies = await runtime.redis.multi().incr(key).pexpire(key, HAND_BACKS_TTL_MS).exec();
    return Number(replies?.[0]?.[1]);
  }

  const failedSendsKey = (key: string) => `${runtime.config.QUEUE_PREFIX}:failed-sends:${key}`;

  /**
   * Drops the record of a part whose send failed in front of us, so a retry sends it. When the
   * database fails too, the part is remembered in Redis, where the job's next run finds it.
   */
  async function dropClaim(key: string, index: number): Promise<void> {
    try {
      await db.query('DELETE FROM deliveries WHERE delivery_key = $1 AND part = $2', [key, index]);
    } catch {
      await runtime.redis.multi().sadd(failedSendsKey(key), index).pexpire(failedSendsKey(key), FAILED_SENDS_TTL_MS).exec();
    }
  }

  /**
   * Of the parts recorded with no provider's answer (`unanswered`), those whose send failed while
   * their record could not be dropped (dropClaim): their records go now, and they are sent again.
   * Redis is read only when there are such parts (after a crash or a failure), so never on the usual path.
   */
  async function failedSends(key: string, unanswered: number[]): Promise<Set<number>> {
    if (unanswered.length === 0) return new Set();
    const remembered = (await runtime.redis.smembers(failedSendsKey(key))).map(Number);
    const failed = unanswered.filter((part) => remembered.includes(part));
    if (failed.length > 0) {
      await db.query('DELETE FROM deliveries WHERE delivery_key = $1 AND part = ANY($2::int[]) AND provider_message_id IS NULL', [
        key,
        failed,
      ]);
      await runtime.redis.srem(failedSendsKey(key), ...failed);
    }
    return new Set(failed);
  }

  /**
   * `notice`: the text of a notice, recorded with its parts so a refusal reported later can send it again.
   *
   * A part is claimed (recorded) before it is sent and given the provider's id once answered: a
   * gateway killed while the provider takes a part (between its answer and the record, the likeliest
   * moment of a crash in a send) leaves the claim, and the job's next run does not send that part
   * again. A send that fails in front of us (the provider answered an error, or the request did not
   * go through) drops the claim (or, the database failing too, has the next run drop it), so a
   * retry sends the part. Stops, leaving no trace of the job, once its owner is being erased (a
   * part already in flight goes out, and its claim goes with the erasure).
   */
  async function sendParts(
    job: Job,
    owner: DeliveryOwner,
    to: ChannelAddress,
    sender: ChannelSender,
    parts: OutboundPart[],
    notice?: string,
  ): Promise<void> {
    const key = job.id as string;
    const done = await db.query<{ part: number; provider_message_id: string | null }>(
      'SELECT part, provider_message_id FROM deliveries WHERE delivery_key = $1',
      [key],
    );
    const unanswered = done.rows.filter((row) => row.provider_message_id === null).map((row) => row.part);
    const failed = await failedSends(key, unanswered);
    for (const part of unanswered) {
      if (!failed.has(part)) logger.warn({ jobId: key, part }, 'a delivery part whose gateway stopped while sending it is not sent again');
    }
    const sent = new Set(done.rows.map((row) => row.part).filter((part) => !failed.has(part)));
    const recipient = recipientOf(to);
    // In order, one at a time: part 2 never overtakes part 1, even across retries.
    for (const [index, part] of parts.entries()) {
      if (sent.has(index)) continue;
      const claim = await claimPart(db, owner, { key, index, channel: to.channel, recipient, notice: notice ?? null });
      if (claim === 'owner erased') return removeWhenDone(job);
      // Another run of the job claimed it since this one looked (a stalled job taken over).
      if (claim === 'taken') continue;
      let providerId: string;
      try {
        providerId = await sender.send(to, part);
      } catch (error) {
        await dropClaim(key, index);
        throw error;
      }
      await db.query('UPDATE deliveries SET provider_message_id = $3 WHERE delivery_key = $1 AND part = $2', [key, index, providerId]);
    }
  }

  /**
   * `outsideWindow`, for a notice: what to do when the chat's provider refuses it until the user
   * writes there (OutsideWindowError) instead of failing.
   */
  async function deliver(
    job: Job,
    token: string | undefined,
    owner: DeliveryOwner,
    to: ChannelAddress,
    message: OutboundMessage,
    outsideWindow?: () => Promise<void>,
  ): Promise<void> {
    // Puts the job back to wait, holding its place in its chat's line: no later delivery overtakes it.
    const wait = (ms: number): Promise<never> => runAgainIn(job, token, ms);
    const sender = clients[to.channel];
    if (!sender) {
      // Every gateway takes deliveries: one without this channel's settings (a copy set up apart,
      // a settings change rolling out) hands the job back for a gateway that has them.
      if ((await handBacks(job)) <= MAX_HAND_BACKS) {
        await lines.join(to, job);
        await wait(HAND_BACK_MS);
      }
      await lines.leave(to, job);
      throw new UnrecoverableError(`${to.channel} is not configured on the gateways that took this delivery`);
    }
    await lines.alone(to, async () => {
      // In the line from its first look, not only once it waits: another gateway taking the chat's
      // next delivery while this one is in flight (and about to get a 429) must see it.
      await lines.join(to, job);
      if (await lines.behind(to, job)) await wait(BEHIND_MS);
      try {
        const parts = outboundParts(message, sender.limits, sender.formatMarkdown);
        await sendParts(job, owner, to, sender, parts, outsideWindow ? message.text : undefined);
      } catch (error) {
        if (outsideWindow && error instanceof OutsideWindowError) {
          await lines.leave(to, job);
          return outsideWindow();
        }
        if (error instanceof ChannelApiError && error.status === 429 && error.retryAfterMs !== undefined) {
          // Rescheduled rather than slept on: the worker slot is free meanwhile.
          if (Date.now() - job.timestamp < THROTTLED_AT_MOST_MS) await wait(error.retryAfterMs);
        }
        // The provider refused this message (a user who blocked the bot): asking again changes nothing.
        const refused = error instanceof ChannelApiError && error.status >= 400 && error.status < 500 && error.status !== 429;
        // BullMQ retries it after its backoff, and meanwhile it holds its place; the last attempt leaves.
        if (refused || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await lines.leave(to, job);
        throw refused ? new UnrecoverableError(error.message) : error;
      }
      await lines.leave(to, job);
    });
  }

  /** A notice of a user being erased (queued as the erasure ran) is dropped, its job with it: it names them and holds their text. */
  async function forErased(userId: string, job: Job): Promise<boolean> {
    if (await ownerLive(db, { userId })) return false;
    removeWhenDone(job);
    return true;
  }

  return jobProcessor('deliveries', {
    'turn-event': async (data, job, token) => deliver(job, token, { turnId: data.turnId }, data.to, await renderTurnEvent(db, data)),
    reply: ({ to, text, channelMessageId }, job, token) =>
      deliver(job, token, channelMessageId ? { channelMessageId } : undefined, to, { text }),
    notify: async ({ userId, text }, job, token) => {
      if (await forErased(userId, job)) return;
      const to = await lastUsedAddress(db, userId, enabledChannels(clients));
      if (!to) {
        logger.info({ jobId: job.id }, 'notification skipped: the user has no channel identity, or is disabled');
        return;
      }
      await deliver(job, token, { userId }, to, { text }, () => queueNoticeResend(runtime.queues, job.id as string, { userId, to, text }));
    },
    'resend-notice': async ({ userId, to, text }, job, token) => {
      if (await forErased(userId, job)) return;
      // As for any notice (lastUsedAddress): an admin may have disabled the user since it was refused.
      if (await isUserDisabled(db, userId)) return logger.info({ jobId: job.id }, 'notice not sent again: the user is disabled');
      const { WHATSAPP_NOTICE_TEMPLATE: name, WHATSAPP_NOTICE_TEMPLATE_LANGUAGE: language } = runtime.config;
      if (name && to.channel === 'whatsapp') return deliver(job, token, { userId }, to, { text, template: { name, language } });
      const other = await lastUsedAddress(db, userId, enabledChannels(clients), [to.channel]);
      if (other) return deliver(job, token, { userId }, other, { text });
      // Never the text: it is the user's.
      logger.warn(
        { jobId: job.id },
        to.channel === 'whatsapp'
          ? 'a notice WhatsApp refused outside its 24-hour window was not sent: the user has no other chat; set WHATSAPP_NOTICE_TEMPLATE to send it as a template'
          : 'a notice Telegram refused (the user never opened a private chat with the bot) was not sent: the user has no other chat',
      );
    },
    'recheck-refusal': createRefusalRecheck(runtime),
    // Inbound media rides on this queue: it needs the channel's token and retries like a delivery.
    transcribe: createTranscriptionHandler(runtime, new Transcriber(runtime.config)),
  });
}

/** The deliveries worker of a gateway process, on its own blocking connection. */
export function startDeliveriesWorker(runtime: Runtime, connection: Redis, clients: ChannelClients): Worker {
  return startWorker(runtime, createDeliveryProcessor(runtime, clients), connection);
}
