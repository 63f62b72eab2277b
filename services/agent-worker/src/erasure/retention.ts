import type { Queryable } from '@assistant/shared';

/**
 * How long an inbound channel message's record is kept (docs/channels.md#webhooks): longer than a
 * provider redelivers it (Meta for up to 7 days, Telegram keeps an update 24 hours), and than
 * anything that reads it (its reply's delivery, about 15 hours at most; a voice note's transcription,
 * minutes). Past that it serves nothing, and can name a person (a WhatsApp message id holds the
 * sender's number), even one nobody owns (a mistyped `/link` from a chat without a user).
 */
export const CHANNEL_MESSAGE_RETENTION_DAYS = 8;

/**
 * How long the record of a message part sent is kept (docs/channels.md#delivery): longer than Meta
 * redelivers a status webhook naming it (up to 7 days), which finds a notice refused outside the
 * window by it, and than a retried delivery runs (about 15 hours at most). A part of a turn's event
 * is kept until its turn has ended as long ago: a Redis come back empty queues again the events of
 * a turn unfinished or ended within a day (lost-redis-sweeper.ts), and such a delivery may wait in
 * its queue past that day (no gateway running, a busy chat's line) before it reads which parts went
 * out, so it must still find them, or it sends them twice. Past that it serves nothing, and names a chat.
 */
export const DELIVERY_RETENTION_DAYS = 8;

const BATCH = 1_000;
/** Batches of one pass: a backlog (the first pass after an upgrade) goes over several passes, not in one long one. */
const BATCHES_PER_PASS = 10;

/**
 * Runs `deleteBatch` (`$1` the batch size, then `params`) until a batch deletes fewer rows, or
 * the pass's batches are done; answers how many rows went.
 */
async function deleteInBatches(db: Queryable, deleteBatch: string, params: unknown[]): Promise<number> {
  let deleted = 0;
  for (let batch = 0; batch < BATCHES_PER_PASS; batch++) {
    const count = (await db.query(deleteBatch, [BATCH, ...params])).rowCount ?? 0;
    deleted += count;
    if (count < BATCH) break;
  }
  return deleted;
}

/** Deletes the records of channel messages received more than the retention ago; answers how many. */
export function pruneChannelMessages(db: Queryable): Promise<number> {
  return deleteInBatches(
    db,
    `DELETE FROM channel_messages WHERE id IN (
       SELECT id FROM channel_messages WHERE received_at < NOW() - make_interval(days => $2) LIMIT $1)`,
    [CHANNEL_MESSAGE_RETENTION_DAYS],
  );
}

/** Deletes the records of message parts sent, and of their turn's end (if any), more than the retention ago; answers how many. */
export function pruneDeliveries(db: Queryable): Promise<number> {
  return deleteInBatches(
    db,
    `DELETE FROM deliveries WHERE (delivery_key, part) IN (
       SELECT d.delivery_key, d.part FROM deliveries d
       WHERE d.sent_at < NOW() - make_interval(days => $2)
         AND NOT EXISTS (SELECT 1 FROM turns t WHERE t.id = d.turn_id
           AND (t.finished_at IS NULL OR t.finished_at > NOW() - make_interval(days => $2)))
       LIMIT $1)`,
    [DELIVERY_RETENTION_DAYS],
  );
}
