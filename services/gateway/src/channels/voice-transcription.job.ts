import { UnrecoverableError } from 'bullmq';
import {
  addJob,
  downloadMedia,
  isPermanentModelError,
  jobId,
  MAX_STALLED_COUNT,
  MediaDownloadError,
  settleVoice,
  sliceText,
  voiceIsPending,
  VOICE_MAX_BYTES,
  VOICE_PLACEHOLDER,
  withTransaction,
  type ChannelAddress,
  type JobHandler,
  type Runtime,
} from '@assistant/shared';
import { withoutControlCharacters } from '../http/input-guard';
import type { Transcriber } from '../llm/transcriber';
import { insertTurn } from '../turns/submit-message';
import { isUserDisabled } from '../users/users.service';
import { pendingVoiceSchema, type PendingVoice } from './media-inbound';
import { rateDelay } from './message-rate';

export const VOICE_FAILED_REPLY = 'Sorry, I could not make out that voice note. Please try again, or type your message.';
/** A transcript is a chat message: the API's 16,000 characters apply (docs/channels.md#message-content). */
const MAX_TRANSCRIPT = 16_000;

/**
 * The `transcribe` job: downloads a voice note (streamed, capped at 20 MB, never in Redis),
 * transcribes it and puts the transcript in the place its message took in its turn when it
 * arrived (voice-holds.ts), which lets that turn start. A failure is retried with the job's
 * backoff; when no attempt is left (counted with the voice note, so a job queued again does not
 * start afresh), or none could help, or its runs kept dying, the place is given up, so the
 * session goes on, and the person gets a short apology: a voice note is never lost silently.
 * Settling the place is idempotent: a run after it finds nothing pending and only republishes.
 */
export function createTranscriptionHandler(runtime: Runtime, transcriber: Transcriber): JobHandler<'deliveries', 'transcribe'> {
  const { db, config, queues } = runtime;

  async function reply(to: ChannelAddress, text: string, rowId: string): Promise<void> {
    await addJob(queues, 'deliveries', 'reply', { to, text, channelMessageId: rowId }, { jobId: jobId('voice-reply', rowId) });
  }

  /**
   * Fills in (or, `undefined`, gives up) the voice note's place. The turn whose outbox to publish,
   * and whether its sender is owed the apology: given up now or by an earlier run, never when an
   * earlier run heard it (a stale run that fails after it).
   */
  function settle(rowId: string, voice: PendingVoice, transcript: string | undefined): Promise<{ turnId?: string; unheard: boolean }> {
    return withTransaction(db, async (client) => {
      const locked = await client.query<{ user_id: string | null; turn_id: string | null; unheard: boolean }>(
        `SELECT user_id, turn_id, COALESCE((media->>'unheard')::boolean, false) AS unheard FROM channel_messages WHERE id = $1 FOR UPDATE`,
        [rowId],
      );
      const row = locked.rows[0];
      if (!row?.user_id) return { unheard: false };
      const held = row.turn_id ?? undefined;
      // No turn: a voice note accepted before voice notes held their place; its transcript makes its turn, counted then.
      const outcome = held ? await settleVoice(client, held, rowId, transcript) : 'late';
      if (transcript === undefined) {
        if (outcome === 'settled') return { turnId: held, unheard: row.unheard };
        // Recorded with the place given up: a run after a crash before the apology finds nothing pending, and sends it.
        await client.query(`UPDATE channel_messages SET media = media || '{"unheard": true}' WHERE id = $1`, [rowId]);
        return { turnId: held, unheard: true };
      }
      if (outcome !== 'late') return { turnId: held, unheard: false };
      // Its turn went on without it (the hold expired): the transcript is a message of its own.
      const { turnId } = await insertTurn(client, config, {
        userId: row.user_id,
        sessionKey: voice.session_key,
        text: transcript,
        origin: voice.reply_to,
        ifBusy: 'merge',
        ...(held ? {} : { startAfterMs: await rateDelay(runtime, row.user_id) }),
      });
      await client.query('UPDATE channel_messages SET turn_id = $2 WHERE id = $1', [rowId, turnId]);
      return { turnId, unheard: false };
    });
  }

  /**
   * Counts an attempt (a download and a paid transcription) with the voice note itself, before it
   * is made, and answers how many there have been: a job queued again after Redis lost it, or run
   * again with its attempts reset, goes on from that count instead of calling the API afresh.
   */
  async function countAttempt(rowId: string): Promise<number> {
    const counted = await db.query<{ attempts: number }>(
      `UPDATE channel_messages SET media = jsonb_set(media, '{attempts}', to_jsonb(COALESCE((media->>'attempts')::int, 0) + 1))
       WHERE id = $1 RETURNING (media->>'attempts')::int AS attempts`,
      [rowId],
    );
    return counted.rows[0]?.attempts ?? 0;
  }

  async function settleAndFlush(rowId: string, voice: PendingVoice, transcript: string | undefined): Promise<void> {
    const { turnId, unheard } = await settle(rowId, voice, transcript);
    if (turnId) await runtime.outbox.flush(turnId);
    if (unheard) await reply(voice.reply_to, VOICE_FAILED_REPLY, rowId);
  }

  return async ({ channelMessageId }, job) => {
    const found = await db.query<{ user_id: string | null; turn_id: string | null; media: unknown }>(
      'SELECT user_id, turn_id, media FROM channel_messages WHERE id = $1',
      [channelMessageId],
    );
    const row = found.rows[0];
    // The user was erased meanwhile: nothing to answer.
    if (!row?.user_id) return;
    const voice = pendingVoiceSchema.parse(row.media);
    if (row.turn_id && !(await voiceIsPending(db, row.turn_id, channelMessageId))) {
      await runtime.outbox.flush(row.turn_id);
      if (voice.unheard) await reply(voice.reply_to, VOICE_FAILED_REPLY, channelMessageId);
      return;
    }
    // No model call for a user an admin disabled, as for their turns (agent-worker turn/budget-check.ts): the
    // placeholder stays in its place, and the turn ends with the disabled account's error, which the chat is shown.
    if (await isUserDisabled(db, row.user_id)) return settleAndFlush(channelMessageId, voice, VOICE_PLACEHOLDER);
    // Every earlier run died mid-way (a voice note that kills its process?) and BullMQ would fail
    // the next stall without running anything: give up now, while the apology can still be sent.
    if (job.stalledCounter >= MAX_STALLED_COUNT) return settleAndFlush(channelMessageId, voice, undefined);
    const attempts = job.opts.attempts ?? 1;
    const attempt = await countAttempt(channelMessageId);
    // Every attempt it had was made (by jobs before this one): it could not be heard.
    if (attempt > attempts) return settleAndFlush(channelMessageId, voice, undefined);

    let text: string;
    try {
      const audio = await downloadMedia(config, voice.ref, VOICE_MAX_BYTES);
      text = cleanTranscript(await transcriber.transcribe(audio));
    } catch (error) {
      const permanent = error instanceof MediaDownloadError ? error.permanent : isPermanentModelError(error);
      if (permanent || attempt >= attempts) {
        await settleAndFlush(channelMessageId, voice, undefined);
      }
      if (permanent) throw new UnrecoverableError(error instanceof Error ? error.message : 'voice note unusable');
      throw error;
    }
    // Blank: nothing was heard.
    await settleAndFlush(channelMessageId, voice, text === '' ? undefined : text);
  };
}

/** Control characters removed (as for any chat text), length capped, blank means nothing was heard. */
export function cleanTranscript(text: string): string {
  return sliceText(withoutControlCharacters(text).trim(), 0, MAX_TRANSCRIPT);
}
