import { z } from 'zod';
import {
  channelAddressSchema,
  DEFAULT_JOB_OPTIONS,
  MEDIA_REQUEST_TIMEOUT_MS,
  mediaRefSchema,
  VOICE_PLACEHOLDER,
  type Config,
  type DbClient,
  type Runtime,
} from '@assistant/shared';
import { insertTurn } from '../turns/submit-message';
import type { InboundContent, InboundMessage } from './channel-types';
import { channelSessionKey } from './identities';
import { rateDelay } from './message-rate';

/** A voice note waiting for its transcript (channel_messages.media): what to fetch, where its turn goes. */
export const pendingVoiceSchema = z.object({
  ref: mediaRefSchema,
  session_key: z.string().min(1),
  reply_to: channelAddressSchema,
  /** Set with giving up its place: it could not be heard, and its sender is owed the apology. */
  unheard: z.boolean().optional(),
});
export type PendingVoice = z.infer<typeof pendingVoiceSchema>;

export const VOICE_OFFLINE_REPLY =
  'Voice notes need a model endpoint, and this assistant runs on its built-in offline planner, which cannot listen. Please type your message instead.';

/** Beyond the attempts themselves: their backoff (seconds) and a wait in a busy queue. */
const VOICE_HOLD_MARGIN_MS = 60_000;

type MediaContent = Extract<InboundContent, { kind: 'voice' | 'photo' }>;
type MediaOutcome = { reply: string } | { turnId: string; voice?: PendingVoice };

/**
 * What a voice note or a photo causes, inside the message's transaction. A photo becomes a
 * message at once, merged like a text (docs/agent.md#busy-sessions), carrying only the provider's
 * reference to the image. A voice note is transcribed later by a `transcribe` job (downloading
 * and transcribing take seconds: the webhook answers first), but takes its place in the session
 * now, merged too: a placeholder that holds its turn until the transcript replaces it
 * (voice-holds.ts), so a text sent right after it is answered after it. It counts against the
 * message rate now, as it arrives, like any message.
 */
export async function acceptMedia(
  client: DbClient,
  runtime: Runtime,
  message: InboundMessage,
  /** Its channel_messages row: the transcript finds its place by it. */
  rowId: string,
  userId: string,
  content: MediaContent,
  /** The user's turns may not start for this long yet (identities.ts: admitChatUser). */
  admissionMs?: number,
): Promise<MediaOutcome> {
  const { config } = runtime;
  if (content.kind === 'voice' && config.LLM_PROVIDER === 'offline') return { reply: VOICE_OFFLINE_REPLY };
  const sessionKey = await channelSessionKey(client, userId, message);
  const startAfterMs = await rateDelay(runtime, userId, admissionMs);
  if (content.kind === 'voice') {
    const { turnId } = await insertTurn(client, config, {
      userId,
      sessionKey,
      text: VOICE_PLACEHOLDER,
      origin: message.replyTo,
      ifBusy: 'merge',
      startAfterMs,
      voice: { message: rowId, holdMs: voiceHoldMs(config) },
    });
    return { turnId, voice: { ref: content.media, session_key: sessionKey, reply_to: message.replyTo } };
  }
  const caption = content.caption.trim();
  // Stored as the user's message: history, digests and the console show that a photo came.
  const text = caption === '' ? '[photo]' : `[photo] ${caption}`;
  const { turnId } = await insertTurn(client, config, {
    userId,
    sessionKey,
    text,
    origin: message.replyTo,
    attachment: content.media,
    ifBusy: 'merge',
    startAfterMs,
  });
  return { turnId };
}

/**
 * How long a voice note may hold its turn: longer than every attempt of its transcription job
 * (the queue's default attempts, each a download of two requests and a transcription), so only
 * a job lost for good lets the turn start without the transcript.
 */
export function voiceHoldMs(config: Pick<Config, 'MODEL_TIMEOUT_MS'>): number {
  const attempts = DEFAULT_JOB_OPTIONS.attempts ?? 1;
  return attempts * (config.MODEL_TIMEOUT_MS + 2 * MEDIA_REQUEST_TIMEOUT_MS) + VOICE_HOLD_MARGIN_MS;
}
