import { randomUUID } from 'node:crypto';
import type { Db, Queryable } from '../db';
import type { EventWriter, TurnEventInput } from '../events';
import type { QueueName, Queues } from '../queues';
import { jobId } from '../queues';

/**
 * What a turn transition must publish after it commits: events for the turn's stream and jobs
 * to enqueue. They are written in the same transaction as the state change and published
 * afterwards; whoever runs next publishes leftovers, and every entry carries a key that makes
 * publishing it twice harmless (event dedupe key, BullMQ job id).
 */
export type OutboxEntry =
  | { key: string; kind: 'event'; event: TurnEventInput }
  | { key: string; kind: 'job'; queue: QueueName; name: string; data: Record<string, unknown>; jobId: string; delayMs?: number };

export function outboxEvent(event: TurnEventInput): OutboxEntry {
  return { key: randomUUID(), kind: 'event', event };
}

export function outboxJob(
  queue: QueueName,
  name: string,
  data: Record<string, unknown>,
  options: { jobId?: string; delayMs?: number } = {},
): OutboxEntry {
  const key = randomUUID();
  return {
    key,
    kind: 'job',
    queue,
    name,
    data,
    jobId: options.jobId ?? jobId('o', key),
    ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
  };
}

/** Appends entries to a turn's outbox; call inside the transition's transaction. */
export async function appendOutbox(db: Queryable, turnId: string, entries: OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.query('UPDATE turns SET outbox = outbox || $2::jsonb WHERE id = $1', [turnId, JSON.stringify(entries)]);
}

export class OutboxPublisher {
  constructor(
    private readonly db: Db,
    private readonly events: EventWriter,
    private readonly queues: Queues,
  ) {}

  /** Publishes a turn's pending entries in order, then removes exactly those from the outbox. */
  async flush(turnId: string): Promise<void> {
    const found = await this.db.query<{ outbox: OutboxEntry[] }>('SELECT outbox FROM turns WHERE id = $1', [turnId]);
    const entries = found.rows[0]?.outbox ?? [];
    if (entries.length === 0) return;
    for (const entry of entries) {
      if (entry.kind === 'event') {
        await this.events.emit(turnId, entry.event, entry.key);
      } else {
        await this.queues[entry.queue].add(entry.name, entry.data, {
          jobId: entry.jobId,
          ...(entry.delayMs !== undefined ? { delay: entry.delayMs } : {}),
        });
      }
    }
    await this.db.query(
      `UPDATE turns SET outbox = COALESCE(
         (SELECT jsonb_agg(e ORDER BY ord) FROM jsonb_array_elements(outbox) WITH ORDINALITY AS t(e, ord)
          WHERE NOT (e->>'key' = ANY($2::text[]))), '[]'::jsonb)
       WHERE id = $1`,
      [turnId, entries.map((entry) => entry.key)],
    );
  }
}
