import { randomUUID } from 'node:crypto';
import { createClientRedis, createLogger, createWorkerRedis, EventWriter, type Redis, type TurnEventInput } from '@assistant/shared';
import { waitFor } from '../../../../scripts/lib/wait-for';
import { EventHub, sseId, type StreamedEvent } from './event-hub';

const prefix = `${process.env.QUEUE_PREFIX}-hub-${randomUUID().slice(0, 8)}`;
let writerRedis: Redis;
let reader: Redis;
let subscriber: Redis;
let hub: EventHub;
let events: EventWriter;

beforeAll(() => {
  writerRedis = createClientRedis(process.env.REDIS_URL as string);
  reader = createWorkerRedis(process.env.REDIS_URL as string);
  subscriber = createWorkerRedis(process.env.REDIS_URL as string);
  hub = new EventHub(prefix, reader, subscriber, createLogger('test', 'silent'));
  events = new EventWriter(writerRedis, prefix, 60);
});

afterAll(async () => {
  await Promise.all([writerRedis.quit(), reader.quit(), subscriber.quit()]);
});

const token = (delta: string): TurnEventInput => ({ type: 'token', delta });

/** Collects what a watcher is handed, and resolves once it holds `count` events. */
function collector() {
  const got: StreamedEvent[] = [];
  let wanted = 0;
  let reached: () => void = () => undefined;
  return {
    got,
    deliver: (event: StreamedEvent) => {
      got.push(event);
      if (got.length === wanted) reached();
    },
    until: (count: number) =>
      new Promise<void>((resolve) => {
        wanted = count;
        reached = resolve;
        if (got.length >= count) resolve();
      }),
  };
}

const texts = (got: StreamedEvent[]) => got.map((event) => (JSON.parse(event.json) as { delta: string }).delta);

describe('EventHub', () => {
  it('replays from the start or from a Last-Event-ID, then relays live events to every watcher, each once and in order', async () => {
    const turnId = randomUUID();
    await events.emitMany(turnId, [{ event: token('a') }, { event: token('b') }]);
    const first = collector();
    const stopFirst = await hub.watch(turnId, '0', first.deliver);
    await first.until(2);
    const [, second] = first.got;

    // A second client resumes after `a` (Last-Event-ID).
    const resumed = collector();
    const stopResumed = await hub.watch(turnId, first.got[0]!.id, resumed.deliver);
    await resumed.until(1);
    expect(resumed.got.map((event) => event.id)).toEqual([second!.id]);

    await events.emitMany(turnId, [{ event: token('c') }, { event: token('d') }]);
    await events.emit(turnId, { type: 'done', status: 'completed' });
    await Promise.all([first.until(5), resumed.until(4)]);

    expect(texts(first.got.slice(0, 4))).toEqual(['a', 'b', 'c', 'd']);
    expect(texts(resumed.got.slice(0, 3))).toEqual(['b', 'c', 'd']);
    expect(JSON.parse(first.got[4]!.json)).toEqual({ type: 'done', turn_id: turnId, seq: 5, status: 'completed' });
    expect(resumed.got.at(-1)).toEqual(first.got.at(-1));
    stopFirst();
    stopResumed();
  });

  it('hands the batch a doorbell carries to watchers that are up to date, without reading the stream', async () => {
    const turnId = randomUUID();
    const watcher = collector();
    const stop = await hub.watch(turnId, '0', watcher.deliver);
    const reads = jest.spyOn(reader, 'xrange');
    try {
      await events.emitMany(turnId, [{ event: token('a') }, { event: token('b') }]);
      await events.emit(turnId, token('c'));
      await watcher.until(3);
      expect(texts(watcher.got)).toEqual(['a', 'b', 'c']);
      expect(watcher.got.map((event) => (JSON.parse(event.json) as { seq: number }).seq)).toEqual([1, 2, 3]);
      expect(reads).not.toHaveBeenCalled();
    } finally {
      reads.mockRestore();
      stop();
    }
  });

  it('reads the stream when a doorbell was missed, so nothing is skipped', async () => {
    const turnId = randomUUID();
    const watcher = collector();
    const stop = await hub.watch(turnId, '0', watcher.deliver);
    // Appended while this gateway was not subscribed: no doorbell reached it.
    await subscriber.unsubscribe(`${prefix}:turn:${turnId}`);
    await events.emit(turnId, token('missed'));
    await subscriber.subscribe(`${prefix}:turn:${turnId}`);
    // The next doorbell makes the hub read the stream from where this watcher is.
    await events.emit(turnId, token('next'));
    await watcher.until(2);
    expect(texts(watcher.got)).toEqual(['missed', 'next']);
    stop();
  });

  it('gives a client that comes from the start while another is being read for everything, from the first event', async () => {
    const turnId = randomUUID();
    await events.emitMany(
      turnId,
      ['a', 'b', 'c', 'd'].map((delta) => ({ event: token(delta) })),
    );
    const [, , third] = (await reader.xrange(`${prefix}:turn:${turnId}:events`, '-', '+')) as [string, string[]][];
    // The resuming client's read is answered once the new client watches too.
    const reads = jest.spyOn(reader, 'xrange').mockImplementationOnce(async (key, start, end) => {
      await waitFor(() => hub.watching === 2, 'both clients watching', { intervalMs: 5 });
      return writerRedis.xrange(key, start, end);
    });
    const fresh = collector();
    const resumed = collector();
    try {
      const stops = await Promise.all([hub.watch(turnId, '0', fresh.deliver), hub.watch(turnId, third![0], resumed.deliver)]);
      await events.emit(turnId, token('e'));
      await Promise.all([waitFor(() => texts(fresh.got).includes('e'), 'the live event', { intervalMs: 5 }), resumed.until(2)]);
      expect(texts(fresh.got)).toEqual(['a', 'b', 'c', 'd', 'e']);
      expect(texts(resumed.got)).toEqual(['d', 'e']);
      for (const stop of stops) stop();
    } finally {
      reads.mockRestore();
    }
  });

  it('keeps relaying to a client whose subscription was under way when the only other client of the turn left', async () => {
    const turnId = randomUUID();
    let leave: () => void = () => undefined;
    const left = new Promise<void>((resolve) => (leave = resolve));
    // The first client's subscription is answered once the second client has come and gone.
    const subscribe = subscriber.subscribe.bind(subscriber);
    const subscribing = jest.spyOn(subscriber, 'subscribe').mockImplementationOnce(async (channel) => {
      await left;
      return subscribe(channel);
    });
    try {
      const staying = collector();
      const watching = hub.watch(turnId, '0', staying.deliver);
      const stopLeaving = await hub.watch(turnId, '0', () => undefined);
      stopLeaving();
      leave();
      const stop = await watching;
      await events.emit(turnId, token('a'));
      await waitFor(() => staying.got.length > 0, 'the event relayed', { timeoutMs: 5_000, intervalMs: 5 });
      expect(texts(staying.got)).toEqual(['a']);
      stop();
    } finally {
      subscribing.mockRestore();
    }
  });
});

describe('sseId', () => {
  it('gives ids that increase compared as text, and that Redis reads back as the same entry', async () => {
    const ids = ['1795618073154-9', '1795618073154-10', '1795618073154-99', '1795618073154-100', '1795618073155-0'].map(sseId);
    expect([...ids].sort()).toEqual(ids);
    expect(ids[1]).toBe('1795618073154-000010');
    const stream = `${prefix}:sse-id`;
    await writerRedis.xadd(stream, '1795618073154-9', 'n', '1');
    await writerRedis.xadd(stream, '1795618073154-10', 'n', '2');
    const after = (await reader.xrange(stream, `(${ids[0]}`, '+')) as [string, string[]][];
    expect(after.map(([id]) => id)).toEqual(['1795618073154-10']);
    await writerRedis.del(stream);
  });
});
