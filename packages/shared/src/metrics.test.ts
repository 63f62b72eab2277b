import { randomUUID } from 'node:crypto';
import { SharedMetrics } from './metrics';
import { createClientRedis, type Redis } from './redis';

/** The shared counters and histograms as /metrics renders them from the Redis hash. */
let redis: Redis;
let metrics: SharedMetrics;

beforeAll(() => {
  redis = createClientRedis(process.env.REDIS_URL as string);
  metrics = new SharedMetrics(redis, `${process.env.QUEUE_PREFIX}-metrics-${randomUUID().slice(0, 8)}`);
});

afterAll(async () => {
  await redis.quit();
});

it('renders histograms with cumulative buckets, sum and count per label set, and counters as written', async () => {
  metrics.observe('assistant_model_call_duration_seconds', {}, 0.07);
  metrics.observe('assistant_model_call_duration_seconds', {}, 0.3);
  metrics.observe('assistant_model_call_duration_seconds', {}, 500);
  metrics.inc('assistant_tool_calls_total', { tool: 'create_folder', outcome: 'success' }, 2);
  const lines = (await metrics.render()).split('\n');

  const duration = 'assistant_model_call_duration_seconds';
  expect(lines).toContain(`${duration}_bucket{le="0.05"} 0`);
  expect(lines).toContain(`${duration}_bucket{le="0.1"} 1`);
  expect(lines).toContain(`${duration}_bucket{le="0.25"} 1`);
  expect(lines).toContain(`${duration}_bucket{le="0.5"} 2`);
  expect(lines).toContain(`${duration}_bucket{le="120"} 2`);
  expect(lines).toContain(`${duration}_bucket{le="+Inf"} 3`);
  expect(lines).toContain(`${duration}_count 3`);
  expect(Number(lines.find((line) => line.startsWith(`${duration}_sum `))?.split(' ')[1])).toBeCloseTo(500.37);
  expect(lines).toContain('assistant_tool_calls_total{outcome="success",tool="create_folder"} 2');
  expect(lines).toContain('# TYPE assistant_model_call_duration_seconds histogram');
});

it('hands its pending increments to whoever writes them (an event batch), and then has none to write', async () => {
  const own = new SharedMetrics(redis, `${process.env.QUEUE_PREFIX}-metrics-${randomUUID().slice(0, 8)}`);
  own.inc('assistant_model_calls_total', { outcome: 'success' });
  own.inc('assistant_model_calls_total', { outcome: 'success' });
  own.inc('assistant_model_tokens_total', { kind: 'prompt' }, 120);

  expect(own.take()).toEqual(['assistant_model_calls_total{outcome="success"}', 2, 'assistant_model_tokens_total{kind="prompt"}', 120]);
  expect(own.take()).toEqual([]);
  await own.flush();
  expect(await redis.hgetall(own.key)).toEqual({});
});

it('keeps the increments of a flush that fails and writes them with a later one', async () => {
  const client = createClientRedis(process.env.REDIS_URL as string);
  const own = new SharedMetrics(client, `${process.env.QUEUE_PREFIX}-metrics-${randomUUID().slice(0, 8)}`);
  own.inc('assistant_model_calls_total', { outcome: 'success' }, 3);
  client.disconnect();
  await own.flush();
  await client.connect();
  own.inc('assistant_model_calls_total', { outcome: 'success' });
  await own.flush();

  expect(await client.hgetall(own.key)).toEqual({ 'assistant_model_calls_total{outcome="success"}': '4' });
  await client.quit();
});
