import { randomUUID } from 'node:crypto';
import { EventWriter, eventKeys, type EventCounters, type StreamEntry, type TurnEventInput } from './events';
import { createClientRedis, type Redis } from './redis';

const prefix = `${process.env.QUEUE_PREFIX}-events-${randomUUID().slice(0, 8)}`;
let redis: Redis;
let writer: EventWriter;
const observed: string[] = [];

beforeAll(() => {
  redis = createClientRedis(process.env.REDIS_URL as string);
  writer = new EventWriter(redis, prefix, 60, (_turnId, event) => void observed.push(event.type));
});

afterAll(async () => {
  await redis.quit();
});

const token = (delta: string): TurnEventInput => ({ type: 'token', delta });

describe('EventWriter', () => {
  it('numbers events in order, drops a repeated key, and drops everything after done, in its batch or a later one', async () => {
    const turnId = randomUUID();
    const first = await writer.emitMany(turnId, [{ event: token('a'), dedupeKey: 'k1' }, { event: token('b') }]);
    // A retried publish of `a`, then the end of the turn with an event behind it in the same batch.
    const second = await writer.emitMany(turnId, [
      { event: token('a'), dedupeKey: 'k1' },
      { event: { type: 'done', status: 'completed' } },
      { event: token('late') },
    ]);
    const third = await writer.emit(turnId, token('later'));

    expect(first.every((id) => id !== null)).toBe(true);
    expect(second[0]).toBeNull();
    expect(second[1]).not.toBeNull();
    expect(second[2]).toBeNull();
    expect(third).toBeNull();
    const entries = (await redis.xrange(eventKeys(prefix, turnId).stream, '-', '+')) as StreamEntry[];
    expect(entries.map(([, fields]) => [fields[1], fields[3]])).toEqual([
      ['1', 'token'],
      ['2', 'token'],
      ['3', 'done'],
    ]);
    expect(observed).toEqual(['token', 'token', 'done']);
  });

  it('counts an event once, when it is appended, and writes the increments handed to the batch with it', async () => {
    const metricsKey = `${prefix}:metrics`;
    let pending: (string | number)[] = ['model_calls', 1, 'tokens', 250];
    const counters: EventCounters = {
      key: metricsKey,
      counterOf: (event) => (event.type === 'done' ? `turns{status="${event.status}"}` : undefined),
      take: () => {
        const taken = pending;
        pending = [];
        return taken;
      },
      giveBack: (increments) => void pending.push(...increments),
    };
    const counting = new EventWriter(redis, prefix, 60, undefined, counters);
    const turnId = randomUUID();
    const done: TurnEventInput = { type: 'done', status: 'completed' };
    await counting.emitMany(turnId, [{ event: token('a') }, { event: done, dedupeKey: 'end' }]);
    // The same end published again (a retried job), and a second end: neither is appended.
    await counting.emitMany(turnId, [{ event: done, dedupeKey: 'end' }]);
    await counting.emit(turnId, done);

    expect(await redis.hgetall(metricsKey)).toEqual({ model_calls: '1', tokens: '250', 'turns{status="completed"}': '1' });
  });

  it('hands the increments of a batch that fails back, for the next write to carry', async () => {
    const closed = createClientRedis(process.env.REDIS_URL as string);
    closed.disconnect();
    const pending: (string | number)[] = ['model_calls', 1];
    const counters: EventCounters = {
      key: `${prefix}:metrics-lost`,
      counterOf: () => undefined,
      take: () => pending.splice(0),
      giveBack: (increments) => void pending.push(...increments),
    };
    await expect(new EventWriter(closed, prefix, 60, undefined, counters).emit(randomUUID(), token('a'))).rejects.toThrow();
    expect(pending).toEqual(['model_calls', 1]);
  });

  it("reads back the text of the tokens at the stream's end, those of the model call under way", async () => {
    const turnId = randomUUID();
    expect(await writer.trailingTokens(turnId)).toBe('');
    await writer.emitMany(turnId, [
      { event: token('earlier step') },
      { event: { type: 'task_update', task_id: 'task_1', status: 'completed' } },
    ]);
    expect(await writer.trailingTokens(turnId)).toBe('');
    const deltas = Array.from({ length: 1_200 }, (_, i) => `${i} `);
    await writer.emitMany(
      turnId,
      deltas.map((delta) => ({ event: token(delta) })),
    );
    expect(await writer.trailingTokens(turnId)).toBe(deltas.join(''));
  });
});
