import fs from 'node:fs';
import path from 'node:path';
import pg from 'pg';
import { migrate } from '@assistant/shared';
import { FakeModel } from './lib/fake-model';
import { BareRoundTrip } from './lib/bench/bare-round-trip';
import { runProfile, turnsAlone, type ProfileOptions, type ProfileResult } from './lib/bench/bench-profile';
import { startPrivateRedis } from './lib/bench/private-redis';
import { TurnSkeleton } from './lib/bench/turn-skeleton';
import type { Usage } from './lib/bench/process-usage';

/**
 * `npm run bench` (docs/benchmark.md): the whole system on this machine, fresh processes
 * per profile, default settings, against its own database and (when redis-server is installed)
 * its own Redis, so CPU is counted for the system alone:
 * - instant: the model answers at once, 30 users: throughput, latency, CPU per turn, and one
 *   turn alone against the bare BullMQ round trip and the turn skeleton (turn-skeleton.ts);
 * - real: every model call takes 1 s, 100 users; also at WORKER_CONCURRENCY 1 and 1,000;
 * - crowd: every model call takes 5 s, 1,000 users: failures and peak RSS.
 * Scale with BENCH_SCALE (0.1 for a quick look); results go to bench/results/latest.json.
 */
const SCALE = Number(process.env.BENCH_SCALE ?? 1);
const ROOT = path.resolve(__dirname, '../..');
const RESULTS = path.join(ROOT, 'bench', 'results', 'latest.json');

/** Skeleton turns run before the profiles (turn-skeleton.ts). */
const SKELETON_WARM_UP_TURNS = 1_500;

const scaled = (n: number) => Math.max(1, Math.round(n * SCALE));
const PROFILES: Record<string, ProfileOptions> = {
  instant: { users: 30, turnsPerUser: scaled(20), modelDelayMs: 0, aloneTurns: scaled(40), prefixShares: true },
  real: { users: scaled(100), turnsPerUser: 3, modelDelayMs: 1_000 },
  real_concurrency_1: { users: scaled(100), turnsPerUser: 1, modelDelayMs: 1_000, env: { WORKER_CONCURRENCY: '1' } },
  real_concurrency_1000: { users: scaled(100), turnsPerUser: 1, modelDelayMs: 1_000, env: { WORKER_CONCURRENCY: '1000' } },
  crowd: { users: scaled(1_000), turnsPerUser: 1, modelDelayMs: 5_000 },
};

/** Unrounded, for a ratio; percentile() for a report. */
function exactPercentile(samples: number[], p: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  if (sorted.length === 0) return 0;
  return sorted[Math.min(sorted.length - 1, Math.ceil((p / 100) * sorted.length) - 1)] as number;
}

const percentile = (samples: number[], p: number) => round(exactPercentile(samples, p));

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

/** The CPU of every process together, in ms. */
const cpuMs = (usages: Record<string, Usage>) => Object.values(usages).reduce((sum, usage) => sum + usage.cpuMs, 0);

/** One counter of each process, per turn. */
const perTurn = (usages: Record<string, Usage>, key: keyof Usage, turns: number) =>
  Object.fromEntries(Object.entries(usages).map(([name, usage]) => [name, round(usage[key] / Math.max(1, turns))]));

const phasesReport = (phases: Record<string, number>) =>
  Object.fromEntries(Object.entries(phases).map(([phase, ms]) => [phase, round(ms)]));

function report(options: ProfileOptions, result: ProfileResult) {
  const done = result.turns - result.failed;
  const turnsPerSecond = round(done / result.seconds);
  const latencies = result.latenciesByRoundMs.flat();
  const statements = result.dbStatements?.reduce((sum, row) => sum + row.calls, 0);
  return {
    users: options.users,
    turns: result.turns,
    failed: result.failed,
    ...(result.failures.length > 0 ? { failure_reasons: result.failures } : {}),
    seconds: round(result.seconds),
    turns_per_second: turnsPerSecond,
    ...(options.modelDelayMs > 0
      ? {
          ideal_turns_per_second: round(options.users / ((2 * options.modelDelayMs) / 1000)),
          of_ideal: round(turnsPerSecond / (options.users / ((2 * options.modelDelayMs) / 1000)), 2),
        }
      : {}),
    turn_ms: { p50: percentile(latencies, 50), p95: percentile(latencies, 95), p99: percentile(latencies, 99) },
    // Where a turn's time goes (TURN_PHASES), means; first_step and second_step include the model's delay.
    turn_phases_ms: phasesReport(result.phasesMs),
    // Where the tail comes from: the first round meets every user's message at once, later ones arrive spread out.
    ...(options.turnsPerUser > 1
      ? {
          turn_ms_by_round: result.latenciesByRoundMs.map((samples) => ({ p50: percentile(samples, 50), max: percentile(samples, 100) })),
          first_round_phases_ms: phasesReport(result.firstRoundPhasesMs),
        }
      : {}),
    cpu_ms_per_turn: round(cpuMs(result.usage) / Math.max(1, done)),
    ...(result.promptPrefixShare !== null ? { prompt_prefix_share: round(result.promptPrefixShare, 3) } : {}),
    cpu_ms_per_turn_by_process: perTurn(result.usage, 'cpuMs', done),
    // What the CPU goes to between processes: each message sent is a write, each one waited for a wake-up
    // (PostgreSQL sends with send(), which the kernel does not count as a write).
    writes_per_turn_by_process: perTurn(result.usage, 'writes', done),
    wakeups_per_turn_by_process: perTurn(result.usage, 'wakeups', done),
    // The machine's other tenant: the fake model and the users' clients share these two cores.
    driver_cpu_ms_per_turn: round(result.driverCpuMs / Math.max(1, done)),
    peak_rss_mib: result.peakRssMiB,
    ...(result.aloneMs.length > 0
      ? {
          alone_turn_ms_p50: percentile(result.aloneMs, 50),
          // Sampled right before and after the turns alone, so both see the machine as it was then (its speed varies).
          alone_bare_round_trip_ms_p50: round(exactPercentile(result.aloneBareMs, 50), 2),
          alone_ratio_to_bare_p50: round(exactPercentile(result.aloneMs, 50) / exactPercentile(result.aloneBareMs, 50)),
          alone_turn_phases_ms: phasesReport(result.alonePhasesMs),
          // The same turn with only what the contract makes every turn do (turn-skeleton.ts), sampled next to it:
          // how far the bare round trip is from a turn of this design at all, and how far the system is from that floor.
          ...(result.skeleton
            ? {
                alone_skeleton_turn_ms_p50: percentile(result.skeleton.ms, 50),
                alone_skeleton_turn_phases_ms: phasesReport(result.skeleton.phasesMs),
                skeleton_bare_round_trip_ms_p50: round(exactPercentile(result.skeleton.bareMs, 50), 2),
                skeleton_ratio_to_bare_p50: round(exactPercentile(result.skeleton.ms, 50) / exactPercentile(result.skeleton.bareMs, 50)),
                alone_ratio_to_skeleton_p50: round(exactPercentile(result.aloneMs, 50) / exactPercentile(result.skeleton.ms, 50), 2),
              }
            : {}),
          // One turn at a time, nothing shared between turns: its CPU against its time says whether it waits or works.
          alone_cpu_ms_per_turn: round(cpuMs(result.aloneUsage) / result.aloneMs.length),
          alone_cpu_ms_per_turn_by_process: perTurn(result.aloneUsage, 'cpuMs', result.aloneMs.length),
        }
      : {}),
    ...(statements !== undefined
      ? {
          db_statements_per_turn: round(statements / Math.max(1, done)),
          // Execution and planning time in PostgreSQL, per turn: what a statement costs, not only how often it runs.
          db_top_statements: result.dbStatements?.slice(0, 40).map(({ calls, ms, query }) => ({
            calls_per_turn: round(calls / Math.max(1, done), 2),
            ms_per_turn: round(ms / Math.max(1, done), 3),
            query,
          })),
        }
      : {}),
    redis_commands_per_turn: round(Object.values(result.redisCommands).reduce((a, b) => a + b, 0) / Math.max(1, done)),
    redis_top_commands_per_turn: Object.fromEntries(
      Object.entries(result.redisCommands)
        .slice(0, 40)
        .map(([command, calls]) => [command, round(calls / Math.max(1, done))]),
    ),
  };
}

async function main(): Promise<void> {
  const run = Date.now().toString(36);
  const base = process.env.BENCH_POSTGRES_URL ?? 'postgres://postgres@127.0.0.1:5432';
  const redis = await startPrivateRedis();
  const redisUrl = redis?.url ?? process.env.REDIS_URL ?? 'redis://127.0.0.1:6379';
  const databaseUrl = `${base}/assistant_bench_${run}`;
  process.env.DATABASE_URL = databaseUrl;
  process.env.REDIS_URL = redisUrl;
  process.env.QUEUE_PREFIX = `bench-${run}`;
  const only = process.env.BENCH_PROFILES?.split(',');
  const model = await new FakeModel().start();
  let bareRoundTrip: BareRoundTrip | undefined;
  let skeleton: TurnSkeleton | undefined;
  try {
    await migrate(databaseUrl);
    bareRoundTrip = await BareRoundTrip.open(redisUrl, `bench-${run}-bare`);
    const bare = await bareRoundTrip.sample(500);
    const bareP50 = percentile(bare, 50);
    process.stdout.write(`bare BullMQ round trip p50 ${bareP50} ms\n`);
    if (Object.entries(PROFILES).some(([name, options]) => (!only || only.includes(name)) && options.aloneTurns)) {
      skeleton = await TurnSkeleton.open({ redisUrl, postgresBase: base, name: `assistant_bench_${run}_skeleton` });
      // As the system's warm-up does, this lets V8 compile the skeleton's hot paths.
      await turnsAlone(skeleton.user, SKELETON_WARM_UP_TURNS);
      process.stdout.write(`turn skeleton p50 ${percentile((await turnsAlone(skeleton.user, 200)).ms, 50)} ms\n`);
    }
    const profiles: Record<string, ReturnType<typeof report> | { error: string }> = {};
    for (const [name, options] of Object.entries(PROFILES)) {
      if (only && !only.includes(name)) continue;
      process.stdout.write(`${name}: ${options.users} users × ${options.turnsPerUser} turns, model ${options.modelDelayMs} ms…\n`);
      try {
        const result = await runProfile(model, options, {
          databaseUrl,
          redisUrl,
          bareRoundTrip,
          ...(skeleton ? { skeleton } : {}),
          ...(redis?.process.pid ? { redisPid: redis.process.pid } : {}),
        });
        profiles[name] = report(options, result);
        const { db_top_statements: _top, redis_top_commands_per_turn: _commands, ...brief } = profiles[name];
        process.stdout.write(`${JSON.stringify(brief)}\n`);
      } catch (error) {
        // One profile that could not run (a process too slow to start on a busy machine) must not lose the others.
        profiles[name] = { error: (error instanceof Error ? error.message : String(error)).split('\n')[0] ?? 'failed' };
        process.stdout.write(`${name} did not run: ${JSON.stringify(profiles[name])}\n`);
      }
    }
    const result = {
      date: new Date().toISOString(),
      machine: `${process.platform} ${process.arch}, ${(await import('node:os')).cpus().length} cores, node ${process.version}`,
      redis: redis ? 'private redis-server (CPU counted)' : 'shared Redis (CPU not counted)',
      bare_round_trip_ms: { p50: bareP50, p95: percentile(bare, 95), p99: percentile(bare, 99) },
      profiles,
    };
    fs.mkdirSync(path.dirname(RESULTS), { recursive: true });
    fs.writeFileSync(RESULTS, `${JSON.stringify(result, null, 2)}\n`);
    process.stdout.write(`written to ${path.relative(process.cwd(), RESULTS)}\n`);
  } finally {
    await bareRoundTrip?.close();
    await skeleton?.close();
    await model.stop();
    redis?.process.kill('SIGTERM');
    const admin = new pg.Client({ connectionString: `${base}/postgres` });
    await admin.connect();
    await admin.query(`DROP DATABASE IF EXISTS "assistant_bench_${run}" WITH (FORCE)`);
    await admin.end();
  }
}

main().catch((error: unknown) => {
  process.stderr.write(`bench failed: ${error instanceof Error ? error.message : String(error)}\n`);
  process.exit(1);
});
