import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import path from 'node:path';
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

describe('a database the server does not have', () => {
  it('stops the process with one line, instead of writing to database 0', () => {
    const url = new URL(process.env.REDIS_URL as string);
    url.pathname = '/99999';
    // The built module, as a process runs it (npm test builds first).
    const built = path.join(__dirname, '..', 'dist', 'redis.js');
    const script = `require(${JSON.stringify(built)}).createClientRedis(${JSON.stringify(url.href)}).set('redis-test:probe', '1')`;
    const run = spawnSync(process.execPath, ['-e', script], { encoding: 'utf8', timeout: 20_000 });
    expect(run.stderr).toBe('REDIS_URL names database 99999, which this Redis server does not have (ERR DB index is out of range)\n');
    expect(run.status).toBe(1);
  });
});
