import { UnrecoverableError } from 'bullmq';
import {
  addJob,
  downloadMedia,
  isPermanentModelError,
  jobId,
  MediaDownloadError,
  sliceText,
  VOICE_MAX_BYTES,
  withTransaction,
  type ChannelAddress,
  type JobHandler,
  type Runtime,
} from '@assistant/shared';
import { withoutControlCharacters } from '../http/input-guard';
import type { Transcriber } from '../llm/transcriber';
import { insertTurn } from '../turns/submit-message';
import { pendingVoiceSchema } from './media-inbound';
import { rateDelay } from './message-rate';

export const VOICE_FAILED_REPLY = 'Sorry, I could not make out that voice note. Please try again, or type your message.';
/** A transcript is a chat message: the API's 16,000 characters apply (docs/channels.md#message-content). */
const MAX_TRANSCRIPT = 16_000;

/**
 * The `transcribe` job: downloads a voice note (streamed, capped at 20 MB, never in Redis),
 * transcribes it and starts its turn with the transcript as the user's message. A failure is
 * retried with the job's backoff; when no attempt is left (or none could help) the person gets
 * a short apology, so a voice note is never lost silently. Creating the turn is idempotent: the
 * channel message row is locked and keeps the turn's id.
 */
export function createTranscriptionHandler(runtime: Runtime, transcriber: Transcriber): JobHandler<'deliveries', 'transcribe'> {
  const { db, config, queues } = runtime;

  async function reply(to: ChannelAddress, text: string, rowId: string): Promise<void> {
    await addJob(queues, 'deliveries', 'reply', { to, text, channelMessageId: rowId }, { jobId: jobId('voice-reply', rowId) });
  }

  return async ({ channelMessageId }, job) => {
    const found = await db.query<{ user_id: string | null; turn_id: string | null; media: unknown }>(
      'SELECT user_id, turn_id, media FROM channel_messages WHERE id = $1',
      [channelMessageId],
    );
    const row = found.rows[0];
    // The user was erased meanwhile: nothing to answer.
    if (!row?.user_id) return;
    if (row.turn_id) return runtime.outbox.flush(row.turn_id);
    const voice = pendingVoiceSchema.parse(row.media);

    let text: string;
    try {
      const audio = await downloadMedia(config, voice.ref, VOICE_MAX_BYTES);
      text = cleanTranscript(await transcriber.transcribe(audio));
    } catch (error) {
      const permanent = error instanceof MediaDownloadError ? error.permanent : isPermanentModelError(error);
      if (permanent || job.attemptsMade + 1 >= (job.opts.attempts ?? 1)) await reply(voice.reply_to, VOICE_FAILED_REPLY, channelMessageId);
      if (permanent) throw new UnrecoverableError(error instanceof Error ? error.message : 'voice note unusable');
      throw error;
    }
    if (text === '') return reply(voice.reply_to, VOICE_FAILED_REPLY, channelMessageId);

    const userId = row.user_id;
    const turnId = await withTransaction(db, async (client) => {
      const locked = await client.query<{ turn_id: string | null }>('SELECT turn_id FROM channel_messages WHERE id = $1 FOR UPDATE', [
        channelMessageId,
      ]);
      const existing = locked.rows[0]?.turn_id;
      if (existing) return existing;
      const { turnId: id } = await insertTurn(client, config, {
        userId,
        sessionKey: voice.session_key,
        text,
        origin: voice.reply_to,
        ifBusy: 'merge',
        // The transcript is the message the rate counts; a retry after its turn was made returned above.
        startAfterMs: await rateDelay(runtime, userId),
      });
      await client.query('UPDATE channel_messages SET turn_id = $2 WHERE id = $1', [channelMessageId, id]);
      return id;
    });
    await runtime.outbox.flush(turnId);
  };
}

/** Control characters removed (as for any chat text), length capped, blank means nothing was heard. */
export function cleanTranscript(text: string): string {
  return sliceText(withoutControlCharacters(text).trim(), 0, MAX_TRANSCRIPT);
}
