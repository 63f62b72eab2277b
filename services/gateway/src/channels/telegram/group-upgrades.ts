import type { Queryable } from '@assistant/shared';
import type { TelegramUpdate } from './telegram.schemas';

/** A basic group and the supergroup it became, under a new chat id (docs/channels.md#group-upgrades). */
export interface GroupUpgrade {
  group: string;
  supergroup: string;
}

/**
 * The upgrade a service message announces. Telegram sends two, one in the old group
 * (`migrate_to_chat_id`) and one in the supergroup (`migrate_from_chat_id`); either is enough.
 */
export function groupUpgrade(update: TelegramUpdate): GroupUpgrade | undefined {
  const message = update.message;
  if (message?.migrate_to_chat_id !== undefined) {
    return { group: String(message.chat.id), supergroup: String(message.migrate_to_chat_id) };
  }
  if (message?.migrate_from_chat_id !== undefined) {
    return { group: String(message.migrate_from_chat_id), supergroup: String(message.chat.id) };
  }
  return undefined;
}

/** Records an upgrade once: its second service message, and any redelivery, change nothing. */
export async function recordGroupUpgrade(db: Queryable, upgrade: GroupUpgrade): Promise<void> {
  await db.query('INSERT INTO telegram_group_upgrades (supergroup_id, group_id) VALUES ($1, $2) ON CONFLICT DO NOTHING', [
    upgrade.supergroup,
    upgrade.group,
  ]);
}

/** The id a Telegram group's sessions are named by: a supergroup upgraded from a basic group keeps the basic group's. */
export async function sessionGroupId(db: Queryable, chatId: string): Promise<string> {
  const found = await db.query<{ group_id: string }>('SELECT group_id FROM telegram_group_upgrades WHERE supergroup_id = $1', [chatId]);
  return found.rows[0]?.group_id ?? chatId;
}
