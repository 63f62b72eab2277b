import { randomUUID } from 'node:crypto';
import { UNFLUSHED_COMMIT, type Db, type Queryable } from '../db';
import type { EventWriter, TurnEventInput } from '../events';
import {
  CHANNEL_EVENT_TYPES,
  MAX_PUBLISHED_KEYS,
  parseJob,
  type ChannelAddress,
  type JobData,
  type JobName,
  type QueueName,
} from '../jobs';
import type { ChatTyping } from './chat-typing';
import { addJob, addStoredJob, jobId, type Queues } from '../queues';
import { tickBatched } from '../tick-batch';

/**
 * What a turn transition must publish after it commits: events for the turn's stream and jobs
 * to enqueue. They are written in the same transaction as the state change and published
 * afterwards; whoever runs next publishes leftovers, and every entry carries a key that makes
 * publishing it twice harmless (event dedupe key, BullMQ job id).
 */
export type OutboxEntry =
  | { key: string; kind: 'event'; event: TurnEventInput }
  | {
      key: string;
      kind: 'job';
      queue: QueueName;
      name: string;
      data: Record<string, unknown>;
      jobId: string;
      delayMs?: number;
      deduplicationId?: string;
    };

export type OutboxJob = Extract<OutboxEntry, { kind: 'job' }>;
export type OutboxEvent = Extract<OutboxEntry, { kind: 'event' }>;

type ChannelEvent = Extract<TurnEventInput, { type: (typeof CHANNEL_EVENT_TYPES)[number] }>;

/** An outbox entry of an event that also goes to the turn's chat. */
export type ChatEvent = OutboxEvent & { event: ChannelEvent };

function isChatEvent(entry: OutboxEvent): entry is ChatEvent {
  return (CHANNEL_EVENT_TYPES as readonly string[]).includes(entry.event.type);
}

/** An event to publish after the commit; `key` (its dedupe key) for one that others may send too. */
export function outboxEvent(event: TurnEventInput, key: string = randomUUID()): OutboxEvent {
  return { key, kind: 'event', event };
}

/** A job to enqueue after the commit; its data is parsed now, so a bad payload fails the transition that builds it. */
export function outboxJob<Q extends QueueName, N extends JobName<Q>>(
  queue: Q,
  name: N,
  data: JobData<Q, N>,
  options: { jobId?: string; delayMs?: number; deduplicationId?: string } = {},
): OutboxJob {
  const key = randomUUID();
  // Entries are stored as JSON and typed as plain records: parsing by a plain name gives one.
  const storedName: string = name;
  return {
    key,
    kind: 'job',
    queue,
    name,
    data: parseJob(queue, storedName, data),
    jobId: options.jobId ?? jobId('o', key),
    ...(options.delayMs !== undefined ? { delayMs: options.delayMs } : {}),
    ...(options.deduplicationId !== undefined ? { deduplicationId: options.deduplicationId } : {}),
  };
}

/** Appends entries to a turn's outbox; call inside the transition's transaction. */
export async function appendOutbox(db: Queryable, turnId: string, entries: OutboxEntry[]): Promise<void> {
  if (entries.length === 0) return;
  await db.query('UPDATE turns SET outbox = outbox || $2::jsonb WHERE id = $1', [turnId, JSON.stringify(entries)]);
}

/** Enqueues an outbox job entry; its deterministic id makes a second add a no-op. */
export async function addOutboxJob(queues: Queues, entry: OutboxJob): Promise<void> {
  await addStoredJob(queues, entry.queue, entry.name, entry.data, {
    jobId: entry.jobId,
    ...(entry.delayMs !== undefined ? { delay: entry.delayMs } : {}),
    // Deduplicated (BullMQ): while a job with the same id waits, this one is dropped; while
    // that one runs, this one is kept and added when it finishes.
    ...(entry.deduplicationId !== undefined ? { deduplication: { id: entry.deduplicationId, keepLastIfActive: true } } : {}),
  });
}

/**
 * Queues the delivery of a chat turn's event to its chat; the job id derives from the entry's
 * key, so adding it again (leftovers republished, a lost job queued again) re-adds the same job,
 * and its `deliveries` rows keep any part already sent from going out twice.
 */
export async function addChatDelivery(queues: Queues, turnId: string, to: ChannelAddress, entry: ChatEvent): Promise<void> {
  await addJob(queues, 'deliveries', 'turn-event', { turnId, to, event: entry.event }, { jobId: jobId('deliver', entry.key) });
}

/**
 * SQL: the turn's `outbox` without the entries whose keys are in `keys` (a text[] expression),
 * the others kept in order; the outbox itself when `keys` is empty.
 */
function outboxWithout(keys: string): string {
  return `CASE WHEN cardinality(${keys}::text[]) = 0 THEN outbox ELSE COALESCE(
      (SELECT jsonb_agg(e ORDER BY ord) FROM jsonb_array_elements(outbox) WITH ORDINALITY AS t(e, ord)
       WHERE NOT (e->>'key' = ANY(${keys}::text[]))), '[]'::jsonb) END`;
}

/**
 * SQL: a chat turn's `chat_events` with those of the entries whose keys are in `keys` that went
 * to its chat appended: what a Redis come back empty lost the deliveries of is queued again
 * from there (lost-redis-sweeper.ts).
 */
function chatEventsWith(keys: string): string {
  // Left as it is (the same stored value) when none of them went to the chat: jsonb_agg of no row is NULL.
  return `CASE WHEN origin IS NULL OR cardinality(${keys}::text[]) = 0 THEN chat_events ELSE COALESCE(chat_events || (
      SELECT jsonb_agg(e ORDER BY ord) FROM jsonb_array_elements(outbox) WITH ORDINALITY AS t(e, ord)
       WHERE e->>'key' = ANY(${keys}::text[]) AND e->'event'->>'type' IN (${CHANNEL_EVENT_TYPES.map((type) => `'${type}'`).join(', ')})),
      chat_events) END`;
}

/**
 * SQL: the SET list of an UPDATE of a turn that removes from its outbox the published entries
 * whose keys are in `keys`, and appends `appended` (a jsonb expression) to what is left.
 */
export function outboxRemovalSet(keys: string, appended?: string): string {
  return `outbox = ${outboxWithout(keys)}${appended ? ` || ${appended}` : ''}, chat_events = ${chatEventsWith(keys)}`;
}

/**
 * SQL: removes the entries whose keys are in `keys` from the outbox of the turn `turnId` and
 * answers the outbox left (`RETURNING outbox`); it writes nothing when none of them is there.
 * `from` names a relation both expressions may read. Unflushed: if a database crash loses the
 * removal, the entries are published again, as after a process killed before it.
 */
export function outboxRemoval(turnId: string, keys: string, from = ''): string {
  return `UPDATE turns SET ${outboxRemovalSet(keys)} ${from}
    WHERE id = ${turnId} AND ${UNFLUSHED_COMMIT}
      AND EXISTS (SELECT 1 FROM jsonb_array_elements(outbox) AS o(e) WHERE e->>'key' = ANY(${keys}::text[]))
    RETURNING outbox`;
}

/** Removals of many turns' entries at once: `$1` turn ids and `$2` keys, pairwise. */
const REMOVE_FROM_OUTBOXES = `WITH published AS (
    SELECT turn_id, array_agg(key) AS keys FROM unnest($1::uuid[], $2::text[]) AS p(turn_id, key) GROUP BY turn_id)
  ${outboxRemoval('published.turn_id', 'published.keys', 'FROM published')}`;

/** Queues whose jobs never emit into a turn's stream: they need not wait for the batch's events. */
const SILENT_QUEUES: ReadonlySet<QueueName> = new Set(['session-digests']);

/** The jobs that remove the batch that queued them when they load the turn (`published` in their data). */
const REMOVING_JOBS: Partial<Record<QueueName, string>> = { 'agent-turns': 'advance', 'tool-calls': 'run-tool' };

export class OutboxPublisher {
  /** The removals asked for in one tick go out as one statement: under load, one for many turns. */
  private readonly removeTogether = tickBatched(async (removals: { turnId: string; keys: string[] }[]) => {
    const pairs = removals.flatMap(({ turnId, keys }) => keys.map((key) => [turnId, key] as const));
    await this.db.query(REMOVE_FROM_OUTBOXES, [pairs.map(([turnId]) => turnId), pairs.map(([, key]) => key)]);
    return new Map<never, never>();
  });

  constructor(
    private readonly db: Db,
    private readonly events: EventWriter,
    private readonly queues: Queues,
    private readonly typing?: ChatTyping,
  ) {}

  /** Publishes whatever a turn's outbox holds (leftovers included), in order. */
  async flush(turnId: string): Promise<void> {
    const found = await this.db.query<{ outbox: OutboxEntry[]; origin: ChannelAddress | null }>(
      'SELECT outbox, origin FROM turns WHERE id = $1',
      [turnId],
    );
    await this.republish(turnId, found.rows[0]?.origin ?? null, found.rows[0]?.outbox ?? []);
  }

  /**
   * Publishes the entries a transition just committed (so it need not read them back). Once
   * published they leave the outbox, in the cheapest way that is safe: when the batch has one job
   * that is the turn's next step (an `advance` or a `run-tool`, not delayed), that job is added
   * last, carrying their keys (`published`), and its load removes them, a statement fewer;
   * otherwise a statement here removes them. With `removal: 'caller'`, a batch without any job
   * is left for the caller's own next statement on the turn to remove: its keys are answered.
   */
  async publish(
    turnId: string,
    origin: ChannelAddress | null,
    entries: OutboxEntry[],
    removal: 'here' | 'caller' = 'here',
  ): Promise<string[]> {
    if (entries.length === 0) return [];
    const keys = entries.map((entry) => entry.key);
    const [step, ...more] = entries.filter(
      (entry): entry is OutboxJob => entry.kind === 'job' && REMOVING_JOBS[entry.queue] === entry.name && entry.delayMs === undefined,
    );
    // A batch of more keys than a job may carry (a model step of a thousand calls, each with its
    // events) is removed here: such a job would be refused by its worker, and the turn left waiting.
    const carried = step && more.length === 0 && keys.length <= MAX_PUBLISHED_KEYS;
    const carrier = carried ? { ...step, data: { ...step.data, published: keys } } : undefined;
    await this.send(turnId, origin, entries, carrier);
    if (carrier) return [];
    if (removal === 'caller' && !entries.some((entry) => entry.kind === 'job')) return keys;
    await this.remove(turnId, keys);
    return [];
  }

  /**
   * Publishes entries found in a turn's outbox (a transition's leftovers: its process died or
   * failed before publishing them), then removes them. Their jobs may have run already, so none
   * of them is trusted with the removal.
   */
  async republish(turnId: string, origin: ChannelAddress | null, entries: OutboxEntry[]): Promise<void> {
    if (entries.length === 0) return;
    await this.send(turnId, origin, entries);
    await this.remove(
      turnId,
      entries.map((entry) => entry.key),
    );
  }

  /** Removes published entries from a turn's outbox. */
  async remove(turnId: string, keys: string[]): Promise<void> {
    if (keys.length > 0) await this.removeTogether({ turnId, keys });
  }

  /**
   * Publishes in order: the events, then the jobs, and last the `carrier` (in place of its entry):
   * once it exists, everything it carries the removal of has been published.
   */
  private async send(turnId: string, origin: ChannelAddress | null, entries: OutboxEntry[], carrier?: OutboxJob): Promise<void> {
    if (origin) await this.trackTyping(turnId, origin, entries);
    // Events first, all in one round trip, so they precede whatever the jobs go on to emit. A job
    // that emits nothing into the turn's stream (the session's digest) goes out with them.
    const events = entries.filter((entry) => entry.kind === 'event');
    const silent = entries.filter((entry): entry is OutboxJob => entry.kind === 'job' && SILENT_QUEUES.has(entry.queue));
    await Promise.all([
      this.events.emitMany(
        turnId,
        events.map((entry) => ({ event: entry.event, dedupeKey: entry.key })),
      ),
      ...silent.map((entry) => addOutboxJob(this.queues, entry)),
    ]);
    // The other jobs all at once, one round trip: they wait for nothing but the events, and each
    // has its own deterministic id, so whichever of them a failure leaves out is added on the retry.
    await Promise.all(
      entries.flatMap((entry) => {
        if (entry.kind === 'job') return entry.key === carrier?.key || silent.includes(entry) ? [] : [addOutboxJob(this.queues, entry)];
        // The chat gets its copy here, once: the job id derives from the entry's key, so
        // republishing leftovers after a crash re-adds the same job.
        return origin && isChatEvent(entry) ? [addChatDelivery(this.queues, turnId, origin, entry)] : [];
      }),
    );
    if (carrier) await addOutboxJob(this.queues, carrier);
  }

  /**
   * A chat turn shows "typing…" from each `advance` (its start, and every resume after an
   * approval or a "continue?") until `done`. The stop comes before the answer is queued for
   * delivery, so no indicator follows the answer; waiting is seen by the gateways' tickers,
   * which read the turn's status before each beat. A WhatsApp turn is left for its ticker, which
   * drops it after its one read receipt.
   */
  private async trackTyping(turnId: string, origin: ChannelAddress, entries: OutboxEntry[]): Promise<void> {
    if (!this.typing) return;
    if (entries.some((entry) => entry.kind === 'event' && entry.event.type === 'done')) {
      // A WhatsApp turn that ends before the ticker's first beat still owes its read receipt:
      // the ticker sends it without the indicator and then drops the turn.
      if (origin.channel !== 'whatsapp') await this.typing.stop(turnId);
    } else {
      const resume = entries.find((entry) => entry.kind === 'job' && entry.queue === 'agent-turns' && entry.name === 'advance');
      if (resume) await this.typing.start(turnId, resume.key);
    }
  }
}
