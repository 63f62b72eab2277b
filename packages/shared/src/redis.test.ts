import { randomUUID } from 'node:crypto';
import { createClientRedis, withScripts, type Redis, type ScriptPipeline } from './redis';

let redis: Redis;

beforeAll(() => {
  redis = createClientRedis(process.env.REDIS_URL as string);
});

afterAll(async () => {
  await redis.quit();
});

const COUNT = { numberOfKeys: 1, lua: "return redis.call('INCRBY', KEYS[1], ARGV[1])" };

describe('withScripts', () => {
  it('runs a script as a command, also after the server forgot it and inside a pipeline', async () => {
    const key = `${process.env.QUEUE_PREFIX}:script-test:${randomUUID()}`;
    const scripts = withScripts(redis, { countBy: COUNT });
    expect(await scripts.countBy(key, 2)).toBe(2);

    // A restarted Redis knows no scripts: the next call still runs.
    await redis.script('FLUSH');
    expect(await scripts.countBy(key, 3)).toBe(5);

    // Defining again keeps the one definition.
    expect(withScripts(redis, { countBy: COUNT }).countBy).toBe(scripts.countBy);

    const pipeline = redis.pipeline() as ScriptPipeline<'countBy'>;
    pipeline.countBy(key, 1);
    pipeline.countBy(key, 1);
    expect(await pipeline.exec()).toEqual([
      [null, 6],
      [null, 7],
    ]);
    await redis.del(key);
  });
});
