import { randomUUID } from 'node:crypto';
import { createClientRedis, type Redis } from '../redis';
import { ChatTyping } from './chat-typing';

let redis: Redis;
let typing: ChatTyping;

beforeAll(() => {
  redis = createClientRedis(process.env.REDIS_URL as string);
  typing = new ChatTyping(redis, `${process.env.QUEUE_PREFIX}-typing-${randomUUID().slice(0, 8)}`);
});

afterAll(async () => {
  await redis.quit();
});

describe('ChatTyping', () => {
  it('hands each due turn to one claimer per beat, keeps a listed turn on its rhythm, and forgets stopped ones', async () => {
    const [a, b] = [randomUUID(), randomUUID()];
    await typing.start(a, 'resume-a1', 1_000);
    await typing.start(b, 'resume-b1', 5_000);
    // Listed already: a second start (a later advance) does not move the beat.
    await typing.start(a, 'resume-a2', 9_000);
    expect(await typing.claimDue(300, 10, 1_000)).toEqual([a]);
    // Claimed for 1,300: a second gateway at the same moment gets nothing.
    expect(await typing.claimDue(300, 10, 1_000)).toEqual([]);
    expect((await typing.claimDue(300, 10, 5_000)).sort()).toEqual([a, b].sort());
    await typing.stop(a);
    expect(await typing.claimDue(300, 10, 60_000)).toEqual([b]);
    await typing.stop(b);
  });

  it('starts a turn once per resume, however often the resume is published', async () => {
    const turn = randomUUID();
    await typing.start(turn, 'resume-1', 1_000);
    expect(await typing.claimDue(300, 10, 1_000)).toEqual([turn]);
    await typing.stop(turn);
    await typing.start(turn, 'resume-1', 2_000);
    expect(await typing.claimDue(300, 10, 60_000)).toEqual([]);
    await typing.start(turn, 'resume-2', 3_000);
    expect(await typing.claimDue(300, 10, 60_000)).toEqual([turn]);
    await typing.stop(turn);
  });
});
