import { downloadMedia, PHOTO_MAX_BYTES, type Config, type Logger } from '@assistant/shared';
import type { ChatMessage } from '../llm/chat-model';
import type { TurnRow } from '@assistant/shared';

/**
 * A channel photo reaches the model (VISION=true) as an image part of its turn's user message.
 * Only the provider's reference is stored (turns.attachment): the image is fetched with the
 * channel's API each time the turn's model request is built and never written to Redis or
 * PostgreSQL. Later turns see the stored text ("[photo] caption") only: re-sending every past
 * photo with every request would cost far more than the one prompt-cache miss this causes.
 */
export class TurnPhotos {
  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  async attach(turn: TurnRow, messages: ChatMessage[]): Promise<ChatMessage[]> {
    if (!turn.attachment || !this.config.VISION) return messages;
    const index = messages.findLastIndex((message) => message.role === 'user');
    const message = messages[index];
    if (!message) return messages;
    try {
      const photo = await downloadMedia(this.config, turn.attachment, PHOTO_MAX_BYTES);
      if (!photo.mimeType.startsWith('image/')) throw new Error(`not an image: ${photo.mimeType}`);
      return messages.with(index, { ...message, images: [`data:${photo.mimeType};base64,${photo.data.toString('base64')}`] });
    } catch (error) {
      // The turn goes on without the image: the model is told, and can say so.
      this.logger.warn({ err: error, turnId: turn.id }, 'photo could not be fetched');
      return messages.with(index, { ...message, content: `${message.content}\n(The photo could not be loaded.)` });
    }
  }
}
