import { downloadMedia, PHOTO_MAX_BYTES, type Config, type Logger, type TurnPhoto, type TurnRow } from '@assistant/shared';
import type { ChatMessage } from '../llm/chat-model';

/**
 * Channel photos reach the model (VISION=true) as image parts of their own user messages; a turn
 * that messages were merged into may carry several. Only the provider's reference is stored
 * (turns.attachment, turns.merged_attachments): each image is fetched with the channel's API each
 * time the turn's model request is built and never written to Redis or PostgreSQL. Later turns
 * see the stored text ("[photo] caption") only: re-sending every past photo with every request
 * would cost far more than the one prompt-cache miss this causes.
 */
export class TurnPhotos {
  constructor(
    private readonly config: Config,
    private readonly logger: Logger,
  ) {}

  async attach(turn: TurnRow, messages: ChatMessage[]): Promise<ChatMessage[]> {
    if (turn.photos.length === 0 || !this.config.VISION) return messages;
    // The turn's messages are the request's last `input_count` user messages, in order.
    const users = messages.flatMap((message, index) => (message.role === 'user' ? [index] : []));
    const first = users.length - turn.input_count;
    const attached = [...messages];
    await Promise.all(
      turn.photos.map(async (photo) => {
        const index = users[first + photo.input];
        const message = index === undefined ? undefined : messages[index];
        // Its message was left out of the history window: so is the photo.
        if (index === undefined || !message) return;
        attached[index] = await this.withPhoto(turn, photo, message);
      }),
    );
    return attached;
  }

  private async withPhoto(turn: TurnRow, photo: TurnPhoto, message: ChatMessage): Promise<ChatMessage> {
    try {
      const image = await downloadMedia(this.config, photo.ref, PHOTO_MAX_BYTES);
      if (!image.mimeType.startsWith('image/')) throw new Error(`not an image: ${image.mimeType}`);
      return { ...message, images: [`data:${image.mimeType};base64,${image.data.toString('base64')}`] };
    } catch (error) {
      // The turn goes on without the image: the model is told, and can say so.
      this.logger.warn({ err: error, turnId: turn.id }, 'photo could not be fetched');
      return { ...message, content: `${message.content}\n(The photo could not be loaded.)` };
    }
  }
}
