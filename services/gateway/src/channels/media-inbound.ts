import { z } from 'zod';
import { channelAddressSchema, mediaRefSchema, type DbClient, type Runtime } from '@assistant/shared';
import { insertTurn } from '../turns/submit-message';
import type { InboundContent, InboundMessage } from './channel-types';
import { channelSessionKey } from './identities';
import { rateDelay } from './message-rate';

/** A voice note waiting for its transcript (channel_messages.media): what to fetch, where its turn goes. */
export const pendingVoiceSchema = z.object({ ref: mediaRefSchema, session_key: z.string().min(1), reply_to: channelAddressSchema });
export type PendingVoice = z.infer<typeof pendingVoiceSchema>;

export const VOICE_OFFLINE_REPLY =
  'Voice notes need a model endpoint, and this assistant runs on its built-in offline planner, which cannot listen. Please type your message instead.';

type MediaContent = Extract<InboundContent, { kind: 'voice' | 'photo' }>;
type MediaOutcome = { reply: string } | { turnId: string } | { voice: PendingVoice };

/**
 * What a voice note or a photo causes, inside the message's transaction. A photo becomes a
 * message at once, merged like a text (docs/agent.md#busy-sessions), carrying only the provider's
 * reference to the image. A voice note is transcribed later by a `transcribe` job (downloading
 * and transcribing take seconds: the webhook answers first), which queues the transcript as the
 * user's message, merged too; the voice note counts against the message rate then, when it
 * becomes a message.
 */
export async function acceptMedia(
  client: DbClient,
  runtime: Runtime,
  message: InboundMessage,
  userId: string,
  content: MediaContent,
): Promise<MediaOutcome> {
  const { config } = runtime;
  if (content.kind === 'voice' && config.LLM_PROVIDER === 'offline') return { reply: VOICE_OFFLINE_REPLY };
  const sessionKey = await channelSessionKey(client, userId, message);
  if (content.kind === 'voice') return { voice: { ref: content.media, session_key: sessionKey, reply_to: message.replyTo } };
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
    startAfterMs: await rateDelay(runtime, userId),
  });
  return { turnId };
}
