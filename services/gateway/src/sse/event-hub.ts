import { doorbellBatch, entryToEvent, eventKeys, type Logger, type Redis, type StreamEntry } from '@assistant/shared';

export interface StreamedEvent {
  id: string;
  type: string;
  json: string;
}

interface Watcher {
  lastId: string;
  deliver(event: StreamedEvent): void;
}

interface TurnWatch {
  watchers: Set<Watcher>;
  pumping: boolean;
  again: boolean;
}

/** Stream entry ids are `<ms>-<seq>`: compare them as number pairs. */
export function compareIds(a: string, b: string): number {
  const [am = 0, as = 0] = a.split('-').map(Number);
  const [bm = 0, bs = 0] = b.split('-').map(Number);
  return am - bm || as - bs;
}

export const STREAM_ID = /^\d+-\d+$/;
/** Each part of a stream entry id is an unsigned 64-bit integer. */
const MAX_ID_PART = 2n ** 64n - 1n;

/**
 * An entry's id as the client gets it: the sequence part padded to six digits, so that ids
 * increase compared as text too (`…-9` before `…-10`). Redis reads it back as the same id.
 */
export function sseId(entryId: string): string {
  const dash = entryId.indexOf('-');
  return `${entryId.slice(0, dash + 1)}${entryId.slice(dash + 1).padStart(6, '0')}`;
}

/**
 * Relays turn events from Redis to SSE clients. The stream of each turn is the truth; pub/sub is
 * a doorbell that carries the batch just appended, after the id of the entry before it. When
 * every client of the turn is at or past that id, the batch is delivered as it came; otherwise
 * (a doorbell missed, a read in progress) the hub reads the stream again from where its clients
 * are. All clients of a gateway share one subscriber and one reader connection, and a read
 * costs one XRANGE per turn however many clients watch it. Each client is handed only entries
 * past the last one it got, so nothing is lost or repeated.
 */
export class EventHub {
  private readonly turns = new Map<string, TurnWatch>();

  constructor(
    private readonly prefix: string,
    private readonly reader: Redis,
    private readonly subscriber: Redis,
    private readonly logger: Logger,
  ) {
    subscriber.on('message', (channel: string, message: string) => {
      const turnId = channel.slice(channel.lastIndexOf(':') + 1);
      this.ring(turnId, message);
    });
    // After a reconnect the subscriptions are restored by ioredis; events may have been missed meanwhile.
    subscriber.on('ready', () => {
      for (const turnId of this.turns.keys()) void this.pump(turnId);
    });
  }

  get watching(): number {
    let count = 0;
    for (const watch of this.turns.values()) count += watch.watchers.size;
    return count;
  }

  /** Delivers the turn's events after `lastId` ('0' = from the start), then live ones. Returns an unwatch function. */
  async watch(turnId: string, lastId: string, deliver: (event: StreamedEvent) => void): Promise<() => void> {
    const watcher: Watcher = { lastId, deliver };
    const existing = this.turns.get(turnId);
    const watch = existing ?? { watchers: new Set<Watcher>(), pumping: false, again: false };
    // In before the subscription is awaited: another client of the turn leaving meanwhile must
    // not take the turn (and its subscription) away from this one, which would then get nothing.
    watch.watchers.add(watcher);
    if (!existing) {
      this.turns.set(turnId, watch);
      await this.subscriber.subscribe(eventKeys(this.prefix, turnId).channel);
    }
    await this.pump(turnId);
    return () => {
      watch.watchers.delete(watcher);
      if (watch.watchers.size > 0 || this.turns.get(turnId) !== watch) return;
      this.turns.delete(turnId);
      this.subscriber.unsubscribe(eventKeys(this.prefix, turnId).channel).catch(() => undefined);
    };
  }

  /** A doorbell: its batch goes straight to the watchers when none of them lacks what came before it. */
  private ring(turnId: string, message: string): void {
    const watch = this.turns.get(turnId);
    if (!watch) return;
    const { after, entries } = doorbellBatch(message);
    const ready = !watch.pumping && after !== '' && [...watch.watchers].every((watcher) => compareIds(watcher.lastId, after) >= 0);
    if (ready) this.deliver(turnId, watch, after, entries);
    else void this.pump(turnId);
  }

  /** Re-reads a turn's stream for every watcher; a doorbell during a read schedules one more read. */
  async pump(turnId: string): Promise<void> {
    const watch = this.turns.get(turnId);
    if (!watch) return;
    if (watch.pumping) {
      watch.again = true;
      return;
    }
    watch.pumping = true;
    try {
      do {
        watch.again = false;
        const from = [...watch.watchers].reduce((min, w) => (compareIds(w.lastId, min) < 0 ? w.lastId : min), '9999999999999-0');
        this.deliver(turnId, watch, from, await this.reader.xrange(eventKeys(this.prefix, turnId).stream, `(${from}`, '+'));
      } while (watch.again);
    } catch (error) {
      this.logger.warn({ err: error, turnId }, 'reading turn events failed');
    } finally {
      watch.pumping = false;
    }
  }

  /**
   * Hands each watcher the entries past the last one it got, in order. `entries` are those after
   * the id `after`: a watcher that is before it (it came while they were being read, from an
   * earlier place) would miss what lies between, so it gets none of them; the read its own
   * arrival asked for (`watch` pumps, which reads again) brings it everything.
   */
  private deliver(turnId: string, watch: TurnWatch, after: string, entries: StreamEntry[]): void {
    const behind = new Set([...watch.watchers].filter((watcher) => compareIds(watcher.lastId, after) < 0));
    for (const entry of entries) {
      const event = entryToEvent(turnId, entry);
      for (const watcher of watch.watchers) {
        if (!behind.has(watcher) && compareIds(event.id, watcher.lastId) > 0) {
          watcher.lastId = event.id;
          watcher.deliver(event);
        }
      }
    }
  }

  /**
   * Where a client that says it is at `lastId` resumes: there, or at the stream's last entry
   * when it names a later one (no such id was ever sent, so nothing past it would come), or at
   * the start when the stream has none yet.
   */
  async resumeFrom(turnId: string, lastId: string): Promise<string> {
    const last = (await this.reader.xrevrange(eventKeys(this.prefix, turnId).stream, '+', '-', 'COUNT', 1)) as StreamEntry[];
    const end = last[0]?.[0] ?? '0-0';
    // Redis refuses a sequence part past 64 bits (every read of the turn would fail); the last
    // id of that millisecond names the same place.
    const [ms, seq = '0'] = lastId.split('-');
    const id = BigInt(seq) > MAX_ID_PART ? `${ms}-${MAX_ID_PART}` : lastId;
    return compareIds(id, end) > 0 ? end : id;
  }

  /**
   * Whether a client positioned at `lastId` has seen the turn's `done`: 'yes', 'no', or 'gone'
   * when the turn has no events (expired, or not yet published).
   */
  async seenDone(turnId: string, lastId: string): Promise<'yes' | 'no' | 'gone'> {
    const keys = eventKeys(this.prefix, turnId);
    const [done, last] = await Promise.all([
      this.reader.hexists(keys.meta, 'done'),
      this.reader.xrevrange(keys.stream, '+', '-', 'COUNT', 1) as Promise<StreamEntry[]>,
    ]);
    const lastEntry = last[0]?.[0];
    if (lastEntry === undefined) return 'gone';
    return done === 1 && compareIds(lastId, lastEntry) >= 0 ? 'yes' : 'no';
  }

  /** Catch-up read for every watched turn (a safety net against a missed doorbell). */
  pumpAll(): void {
    for (const turnId of this.turns.keys()) void this.pump(turnId);
  }
}
