import { cleanedPosition, cleanWebhookBody } from '../../http/input-guard';
import { parse } from '../../http/validate';
import { telegramUpdate, type TelegramMessage, type TelegramUpdate } from './telegram.schemas';

type Entity = NonNullable<TelegramMessage['entities']>[number];

/**
 * A webhook body as an update, its strings cleaned of control characters (docs/channels.md#message-content).
 * The message's entities (a mention, a command) move with its text: Telegram counts their offsets in
 * UTF-16 units of the text as sent, and each control character removed before one would shift it
 * onto other words.
 */
export function readTelegramUpdate(body: unknown): TelegramUpdate {
  const update = parse(telegramUpdate, cleanWebhookBody(body));
  const sent = telegramUpdate.safeParse(body).data?.message;
  if (update.message && sent) {
    const { text, entities, caption, caption_entities: captionEntities } = sent;
    if (text !== undefined && entities) update.message.entities = moved(text, entities);
    if (caption !== undefined && captionEntities) update.message.caption_entities = moved(caption, captionEntities);
  }
  return update;
}

function moved(text: string, entities: Entity[]): Entity[] {
  const position = cleanedPosition(text);
  return entities.map((entity) => {
    const offset = position(entity.offset);
    return { ...entity, offset, length: position(entity.offset + entity.length) - offset };
  });
}
