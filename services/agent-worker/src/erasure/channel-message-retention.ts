import type { Queryable } from '@assistant/shared';

/**
 * How long an inbound channel message's record is kept (docs/channels.md#webhooks): longer than a
 * provider redelivers it (Meta for up to 7 days, Telegram keeps an update 24 hours), and than
 * anything that reads it (its reply's delivery, about 15 hours at most; a voice note's transcription,
 * minutes). Past that it serves nothing, and can name a person (a WhatsApp message id holds the
 * sender's number), even one nobody owns (a mistyped `/link` from a chat without a user).
 */
export const CHANNEL_MESSAGE_RETENTION_DAYS = 8;

const BATCH = 1_000;
/** Batches of one pass: a backlog (the first pass after an upgrade) goes over several passes, not in one long one. */
const BATCHES_PER_PASS = 10;

/** Deletes the records of channel messages received more than the retention ago; answers how many. */
export async function pruneChannelMessages(db: Queryable): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < BATCHES_PER_PASS; batch++) {
    const result = await db.query(
      `DELETE FROM channel_messages WHERE id IN (
         SELECT id FROM channel_messages WHERE received_at < NOW() - make_interval(days => $1) LIMIT $2)`,
      [CHANNEL_MESSAGE_RETENTION_DAYS, BATCH],
    );
    deleted += result.rowCount ?? 0;
    if ((result.rowCount ?? 0) < BATCH) break;
  }
  return deleted;
}
