import fs from 'node:fs';
import path from 'node:path';
import { Queue, QueueEvents, Worker } from 'bullmq';
import { Redis } from 'ioredis';
import pg from 'pg';
import { migrate } from '@assistant/shared';
import { Api } from './lib/api';
import { FakeModel, lastMessage } from './lib/fake-model';
import { TestSystem } from './lib/system';

/**
 * `npm run bench`: an isolated copy of the system (its own database and Redis prefix) with a
 * zero-latency fake model; N turns (each: one model step planning two tool calls, then the
 * answer) from M concurrent sessions in autonomous mode, every SSE stream read to `done`; and,
 * on the same Redis, the bare BullMQ request/response round trip, for comparison.
 */
const TURNS = Number(process.env.BENCH_TURNS ?? 1_000);
const SESSIONS = Number(process.env.BENCH_SESSIONS ?? 50);
const ROOT = path.resolve(__dirname, '../..');
const RESULTS = path.join(ROOT, 'bench', 'results', 'latest.json');

function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

function summary(samples: number[]) {
  const sorted = [...samples].sort((a, b) => a - b);
  return { p50: percentile(sorted, 50), p95: percentile(sorted, 95), p99: percentile(sorted, 99) };
}

/** Peak resident set size of a process (VmHWM), in MiB. */
function peakRssMiB(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

async function redisBytes(redis: Redis, prefix: string): Promise<{ keys: number; bytes: number }> {
  let cursor = '0';
  let keys = 0;
  let bytes = 0;
  do {
    const [next, found] = await redis.scan(cursor, 'MATCH', `${prefix}:*`, 'COUNT', 1000);
    for (const key of found) {
      keys += 1;
      bytes += Number((await redis.call('MEMORY', 'USAGE', key)) ?? 0);
    }
    cursor = next;
  } while (cursor !== '0');
  return { keys, bytes };
}

/** The floor any queued request/response pays here: add a job, a worker answers, wait for it. */
async function bareRoundTrip(redisUrl: string, prefix: string, count: number, concurrency: number): Promise<number[]> {
  const connection = new Redis(redisUrl, { maxRetriesPerRequest: null });
  const queue = new Queue('bench-echo', { connection, prefix });
  const events = new QueueEvents('bench-echo', { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix });
  const worker = new Worker('bench-echo', async (job) => job.data, { connection: new Redis(redisUrl, { maxRetriesPerRequest: null }), prefix, concurrency });
  // Every waiter listens on the shared QueueEvents and Queue; that many listeners is expected here.
  events.setMaxListeners(concurrency * 2 + 10);
  queue.setMaxListeners(concurrency * 2 + 10);
  await events.waitUntilReady();
  const samples: number[] = [];
  let next = 0;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (next < count) {
        next += 1;
        const started = performance.now();
        const job = await queue.add('echo', { n: next }, { removeOnComplete: { age: 60 } });
        await job.waitUntilFinished(events, 10_000);
        samples.push(performance.now() - started);
      }
    }),
  );
  await worker.close();
  await events.close();
  await queue.obliterate({ force: true });
  await queue.close();
  connection.disconnect();
  return samples;
}

async function main(): Promise<void> {
  const run = Date.now().toString(36);
  const base = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const redisUrl = process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  process.env.DATABASE_URL = `${base}/assistant_bench_${run}`;
  process.env.QUEUE_PREFIX = `bench-${run}`;
  await migrate(process.env.DATABASE_URL);

  const model = await new FakeModel().start();
  let folder = 0;
  model.script = (body) =>
    lastMessage(body).role === 'user'
      ? {
          toolCalls: [
            { name: 'create_folder', arguments: { name: `Bench ${(folder += 1)}` } },
            { name: 'search_documents', arguments: { query: 'bench' } },
          ],
        }
      : { content: 'Done: the folder is there and nothing matched the search.', chunkSize: 16 };
  const system = await new TestSystem().start({
    env: { OPENAI_BASE_URL: model.url, LOG_LEVEL: 'warn', RATE_LIMIT_MESSAGES_PER_MINUTE: '0', JOB_LOCK_MS: '30000' },
  });
  const redis = new Redis(redisUrl);
  const admin = new pg.Client({ connectionString: base + '/postgres' });
  try {
    const api = new Api(system.url);
    const user = await api.createUser(system.adminToken, 'Bench');
    await user.patch('/v1/preferences', { autonomous_mode: true });
    process.stdout.write(`bench: ${TURNS} turns from ${SESSIONS} sessions…\n`);

    const latencies: number[] = [];
    let sent = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: SESSIONS }, async (_, s) => {
        while (sent < TURNS) {
          sent += 1;
          const t0 = performance.now();
          const { turn_id: turnId } = await user.send(`bench ${sent}`, `agent:main:api:direct:bench${s}`);
          const events = await user.events(turnId, { timeoutMs: 60_000 });
          if (events.at(-1)?.data.status !== 'completed') throw new Error(`turn ${turnId} ended ${events.at(-1)?.data.status}`);
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const bare = await bareRoundTrip(redisUrl, system.prefix, Math.min(TURNS, 2_000), SESSIONS);

    const turn = summary(latencies);
    const roundTrip = summary(bare);
    const memory = await redisBytes(redis, system.prefix);
    const result = {
      date: new Date().toISOString(),
      machine: `${process.platform} ${process.arch}, node ${process.version}`,
      turns: TURNS,
      sessions: SESSIONS,
      turns_per_second: Math.round((TURNS / seconds) * 10) / 10,
      turn_latency_ms: turn,
      bare_round_trip_ms: roundTrip,
      latency_ratio_p50: Math.round((turn.p50 / roundTrip.p50) * 10) / 10,
      peak_rss_mib: Object.fromEntries([...system.processes.entries()].map(([name, child]) => [name, peakRssMiB(child.pid)])),
      redis_after_run: { keys: memory.keys, bytes: memory.bytes, bytes_per_turn: Math.round(memory.bytes / TURNS) },
    };
    fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
    fs.writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(
      [
        `turns/s            ${result.turns_per_second}`,
        `turn latency ms    p50 ${turn.p50.toFixed(1)}  p95 ${turn.p95.toFixed(1)}  p99 ${turn.p99.toFixed(1)}`,
        `bare BullMQ rt ms  p50 ${roundTrip.p50.toFixed(2)}  p95 ${roundTrip.p95.toFixed(2)}  p99 ${roundTrip.p99.toFixed(2)}`,
        `ratio (p50)        ${result.latency_ratio_p50}`,
        `peak RSS MiB       ${Object.entries(result.peak_rss_mib).map(([k, v]) => `${k} ${v}`).join('  ')}`,
        `redis after run    ${memory.keys} keys, ${(memory.bytes / 1024 / 1024).toFixed(1)} MiB (${result.redis_after_run.bytes_per_turn} bytes/turn)`,
        `written to         ${path.relative(process.cwd(), RESULTS)}`,
      ].join('\n') + '\n',
    );
  } finally {
    await system.stop();
    await model.stop();
    await redis.quit();
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "assistant_bench_${run}" WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
