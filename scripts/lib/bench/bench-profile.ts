import { parseConfig } from '@assistant/shared';
import { Redis } from 'ioredis';
import pg from 'pg';
import { Api, type StreamEvent } from '../api';
import { lastMessage, PrefixShares, type FakeModel } from '../fake-model';
import { TestSystem } from '../system';
import type { BareRoundTrip } from './bare-round-trip';
import { peakRssMiB, UsageMeter, type Usage } from './process-usage';
import type { TurnSkeleton } from './turn-skeleton';

export interface ProfileOptions {
  users: number;
  turnsPerUser: number;
  /** How long every model call takes. */
  modelDelayMs: number;
  env?: Record<string, string>;
  /** Also time this many turns of one user alone, one after another. */
  aloneTurns?: number;
  /**
   * Also measure how much of each model request repeats its session's previous one. The load
   * generator's work, on the cores the system is measured on, so only where it is reported.
   */
  prefixShares?: boolean;
}

export interface ProfileResult {
  turns: number;
  failed: number;
  failures: string[];
  seconds: number;
  /** Latencies of the completed turns by round: every user's first turn, then every user's second, and so on. */
  latenciesByRoundMs: number[][];
  aloneMs: number[];
  /** Bare round trips sampled right before and right after the turns alone (BARE_AROUND_ALONE each). */
  aloneBareMs: number[];
  /**
   * Turns of the skeleton (turn-skeleton.ts) sampled right after the turns alone and their bare
   * round trips, their phases, and bare round trips sampled right after them (BARE_AROUND_ALONE).
   */
  skeleton?: { ms: number[]; phasesMs: Record<TurnPhase, number>; bareMs: number[] };
  usage: Record<string, Usage>;
  /** What the system used while the turns alone ran. */
  aloneUsage: Record<string, Usage>;
  /** CPU of the bench's own process (the fake model and the users' HTTP and SSE clients), not counted in usage. */
  driverCpuMs: number;
  peakRssMiB: Record<string, number | null>;
  dbStatements: { calls: number; ms: number; query: string }[] | null;
  /** Redis commands run in the loaded window, by command (`INFO commandstats`). */
  redisCommands: Record<string, number>;
  /** Mean share of each model request that repeats its session's previous one as a prefix, when measured. */
  promptPrefixShare: number | null;
  /** Where the completed turns of the loaded window spent their time, mean ms per phase (TURN_PHASES). */
  phasesMs: Record<TurnPhase, number>;
  /** The same for the first round alone, which meets every user's message at once. */
  firstRoundPhasesMs: Record<TurnPhase, number>;
  /** The same for the turns alone. */
  alonePhasesMs: Record<TurnPhase, number>;
}

/**
 * A turn's time in parts, told by its events' ids (the Redis time each was written, in ms) and
 * the client's clock on the same machine: `accept` until `turn_started`, `first_step` until
 * `task_list` (the model's first call included), `tools` until the last tool's end,
 * `second_step` until the answer's first token (the second call included), `answer` until
 * `done`, `delivery` until the client has `done`.
 */
export const TURN_PHASES = ['accept', 'first_step', 'tools', 'second_step', 'answer', 'delivery'] as const;
export type TurnPhase = (typeof TURN_PHASES)[number];

const TURN_TIMEOUT_MS = 120_000;
const USER_BATCH = 50;
/** Users who take warm-up turns together before the measured window, and how many each. */
const WARM_UP_USERS = 30;
const WARM_UP_TURNS = 20;
/**
 * Bare round trips sampled right before and right after the turns alone (a second or so): the
 * machine's speed drifts by a third within minutes, so the ratio compares the two at one moment.
 */
const BARE_AROUND_ALONE = 250;
/**
 * The skeleton's turns sampled after the turns alone, and those run first to warm it again: it sat
 * idle while the system ran, and on this machine a process that has been idle for a minute runs
 * at about half speed for hundreds of turns (its CPU per turn doubled), whether or not V8 may
 * flush bytecode or reduce memory while idle (docs/benchmark.md, "A turn alone").
 */
const SKELETON_SAMPLES = 100;
const SKELETON_REWARM = 500;

/**
 * One load profile against fresh processes: each user (its own session, autonomous mode) sends
 * turns one after another, every turn one model step with two tool calls and then the answer,
 * each SSE stream read to `done`. CPU is measured over the loaded window for every process of
 * the system: the three node processes, this database's PostgreSQL backends, and Redis.
 */
export async function runProfile(
  model: FakeModel,
  options: ProfileOptions,
  infra: { databaseUrl: string; redisUrl: string; redisPid?: number; bareRoundTrip: BareRoundTrip; skeleton?: TurnSkeleton },
): Promise<ProfileResult> {
  let folder = 0;
  // The warm-up's model answers at once, whatever the profile: it is there to compile, not to wait.
  let modelDelayMs = 0;
  // Only what the report needs, as requests arrive: keeping every request (tens of kilobytes each,
  // thousands of them) grew this process's heap to 261 MiB by the end of the instant profile
  // (56 MiB without), the load generator's garbage on the two cores the system is measured on.
  const prefixes = new PrefixShares();
  model.keep = options.prefixShares ? (request) => prefixes.add(request.body) : () => undefined;
  model.script = (body) =>
    lastMessage(body).role === 'user'
      ? {
          delayMs: modelDelayMs,
          toolCalls: [
            { name: 'create_folder', arguments: { name: `Bench ${(folder += 1)}` } },
            { name: 'search_documents', arguments: { query: 'bench' } },
          ],
        }
      : { delayMs: modelDelayMs, content: 'Done: the folder is there and nothing matched the search.', chunkSize: 16 };

  const system = await new TestSystem().start({
    env: {
      OPENAI_BASE_URL: model.url,
      LOG_LEVEL: 'warn',
      RATE_LIMIT_MESSAGES_PER_MINUTE: '0',
      // The product's default lease, not the test harness's short one.
      JOB_LOCK_MS: String(parseConfig({}).JOB_LOCK_MS),
      ...options.env,
    },
    // e.g. BENCH_NODE_ARGS="--cpu-prof --cpu-prof-dir=/tmp/prof" profiles every process.
    nodeArgs: process.env.BENCH_NODE_ARGS?.split(' ').filter(Boolean) ?? [],
  });
  const db = new pg.Client({ connectionString: infra.databaseUrl });
  await db.connect();
  const redis = new Redis(infra.redisUrl, { lazyConnect: true });
  await redis.connect();
  try {
    const api = new Api(system.url);
    const users: Api[] = [];
    for (let i = 0; i < options.users; i += USER_BATCH) {
      const batch = await Promise.all(
        Array.from({ length: Math.min(USER_BATCH, options.users - i) }, async (_, j) => {
          const user = await api.createUser(system.adminToken, { name: `Bench ${i + j}` });
          await user.patch('/v1/preferences', { autonomous_mode: true });
          return user;
        }),
      );
      users.push(...batch);
    }
    // Warm up outside the measured window, with turns at once as under load: every pool opens the
    // connections the load needs (each a new PostgreSQL backend that loads its catalogs and plans
    // its statements once) and the hot paths get compiled, as in a system that has been running.
    // One turn each is not enough: V8 optimises a function only once it is hot, and with one warm-up
    // turn its optimising compiler still took a tenth of the machine's CPU in the measured window
    // (perf), and the node processes used 25 ms per turn. After 20 each they use about 18. More would
    // still help the compiler a little, but also lengthens the sessions measured, whose history
    // every model request carries (docs/benchmark.md).
    await Promise.all(
      users.slice(0, WARM_UP_USERS).map(async (user, index) => {
        for (let n = 0; n < WARM_UP_TURNS; n++) await runTurn(user, index);
      }),
    );
    modelDelayMs = options.modelDelayMs;

    const statements = await statementStats(db, 'reset');
    await redis.config('RESETSTAT');
    const processPids = () => [...system.processes.entries()].map(([name, child]) => [name, child.pid as number] as const);
    const dbPids = async () =>
      (
        await db.query<{ pid: number }>('SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()')
      ).rows.map((row) => row.pid);
    // CPU of every process of the system over a window: the three node processes, this database's backends and Redis.
    const startMeter = async () => {
      const meter = new UsageMeter();
      meter.start([...processPids().map(([, pid]) => pid), ...(await dbPids()), ...(infra.redisPid ? [infra.redisPid] : [])]);
      return meter;
    };
    const stopMeter = async (meter: UsageMeter) =>
      meter.stop({
        ...Object.fromEntries(processPids().map(([name, pid]) => [name, [pid]])),
        postgresql: await dbPids(),
        ...(infra.redisPid ? { redis: [infra.redisPid] } : {}),
      });
    const meter = await startMeter();

    const driverBefore = process.cpuUsage();
    const latenciesByRoundMs: number[][] = Array.from({ length: options.turnsPerUser }, () => []);
    const phases = new PhaseMeans();
    const firstRoundPhases = new PhaseMeans();
    const failures: string[] = [];
    const started = performance.now();
    await Promise.all(
      users.map(async (user, index) => {
        for (let n = 0; n < options.turnsPerUser; n++) {
          const outcome = await runTurn(user, index);
          if (typeof outcome === 'string') {
            failures.push(outcome);
            continue;
          }
          latenciesByRoundMs[n]?.push(outcome.ms);
          phases.add(outcome.phases);
          if (n === 0) firstRoundPhases.add(outcome.phases);
        }
      }),
    );
    const seconds = (performance.now() - started) / 1000;
    const driver = process.cpuUsage(driverBefore);
    const usage = await stopMeter(meter);
    const dbStatements = statements ? await statementStats(db, 'read') : null;
    const redisCommands = await redisCommandStats(redis);

    // One turn alone measures the system, not the load generator: its prefix comparison (about
    // 0.2 ms for each model request, before the model answers) is over.
    model.keep = () => undefined;
    const aloneTurns = options.aloneTurns ?? 0;
    const bareAround = async (): Promise<number[]> => (aloneTurns > 0 ? infra.bareRoundTrip.sample(BARE_AROUND_ALONE) : []);
    const aloneBareMs = await bareAround();
    const aloneMeter = await startMeter();
    const alone = await turnsAlone(users[0] as Api, aloneTurns);
    const aloneUsage = await stopMeter(aloneMeter);
    aloneBareMs.push(...(await bareAround()));
    const { skeleton } = infra;
    const skeletonAlone =
      aloneTurns > 0 && skeleton
        ? await turnsAlone(skeleton.user, SKELETON_REWARM).then(() => turnsAlone(skeleton.user, SKELETON_SAMPLES))
        : undefined;
    const skeletonBareMs = skeletonAlone ? await bareAround() : [];
    const peak = Object.fromEntries(processPids().map(([name, pid]) => [name, peakRssMiB(pid)]));
    return {
      turns: options.users * options.turnsPerUser,
      failed: failures.length,
      failures: [...new Set(failures)].slice(0, 5),
      seconds,
      latenciesByRoundMs,
      aloneMs: alone.ms,
      aloneBareMs,
      ...(skeletonAlone ? { skeleton: { ms: skeletonAlone.ms, phasesMs: skeletonAlone.phases, bareMs: skeletonBareMs } } : {}),
      usage,
      aloneUsage,
      driverCpuMs: (driver.user + driver.system) / 1000,
      peakRssMiB: peak,
      dbStatements,
      redisCommands,
      promptPrefixShare: options.prefixShares ? mean(prefixes.shares) : null,
      phasesMs: phases.means(),
      firstRoundPhasesMs: firstRoundPhases.means(),
      alonePhasesMs: alone.phases,
    };
  } finally {
    redis.disconnect();
    await db.end();
    await system.stop();
  }
}

/** Mean ms per TURN_PHASES phase over the turns added. */
class PhaseMeans {
  private readonly sums = Object.fromEntries(TURN_PHASES.map((phase) => [phase, 0])) as Record<TurnPhase, number>;
  private turns = 0;

  add(phases: Record<TurnPhase, number>): void {
    for (const phase of TURN_PHASES) this.sums[phase] += phases[phase];
    this.turns += 1;
  }

  means(): Record<TurnPhase, number> {
    return Object.fromEntries(TURN_PHASES.map((phase) => [phase, this.sums[phase] / Math.max(1, this.turns)])) as Record<TurnPhase, number>;
  }
}

const mean = (values: number[]) => values.reduce((sum, value) => sum + value, 0) / Math.max(1, values.length);

/** `count` turns of one user, one after another: the latency of each that completed, and their mean phases. */
export async function turnsAlone(user: Api, count: number): Promise<{ ms: number[]; phases: Record<TurnPhase, number> }> {
  const ms: number[] = [];
  const phases = new PhaseMeans();
  for (let n = 0; n < count; n++) {
    const outcome = await runTurn(user, 0);
    if (typeof outcome === 'string') continue;
    ms.push(outcome.ms);
    phases.add(outcome.phases);
  }
  return { ms, phases: phases.means() };
}

/**
 * One turn to its end: its latency in ms and its phases, or why it failed. Each user's text is
 * its own (prefix shares key on it).
 */
async function runTurn(user: Api, userIndex: number): Promise<{ ms: number; phases: Record<TurnPhase, number> } | string> {
  const started = performance.now();
  const sentAt = Date.now();
  try {
    const { turn_id: turnId } = await user.send(`bench ${userIndex}: make a folder and search`);
    let doneAt = 0;
    const events = await user.events(turnId, {
      timeoutMs: TURN_TIMEOUT_MS,
      until: (event) => {
        if (event.event !== 'done') return false;
        doneAt = Date.now();
        return true;
      },
    });
    const status = events.at(-1)?.data.status;
    if (status !== 'completed') return `ended ${String(status)}`;
    return { ms: performance.now() - started, phases: turnPhases(events, sentAt, doneAt) };
  } catch (error) {
    return error instanceof Error ? error.message.slice(0, 200) : String(error);
  }
}

/** TURN_PHASES of a completed turn of the bench's shape (a step with tools, then the answer). */
function turnPhases(events: StreamEvent[], sentAt: number, doneAt: number): Record<TurnPhase, number> {
  const at = (event: StreamEvent | undefined) => Number(event?.id.split('-')[0] ?? NaN);
  const first = (type: string) => events.find((event) => event.event === type);
  const toolsEnd = events.findLast((event) => event.event === 'tool_complete' || event.event === 'tool_failed');
  const times = [sentAt, at(first('turn_started')), at(first('task_list')), at(toolsEnd), at(first('token')), at(first('done')), doneAt];
  return Object.fromEntries(TURN_PHASES.map((phase, i) => [phase, (times[i + 1] as number) - (times[i] as number)])) as Record<
    TurnPhase,
    number
  >;
}

/** Calls per Redis command since the last RESETSTAT, most frequent first (this probe's own INFO and CONFIG left out). */
async function redisCommandStats(redis: Redis): Promise<Record<string, number>> {
  const info = await redis.info('commandstats');
  const calls = [...info.matchAll(/^cmdstat_([^:]+):calls=(\d+)/gm)]
    .map(([, command, count]) => [command as string, Number(count)] as const)
    .filter(([command]) => command !== 'info' && command !== 'config');
  return Object.fromEntries(calls.sort((a, b) => b[1] - a[1]));
}

/** pg_stat_statements of this database (null when the extension is not loaded). */
async function statementStats(db: pg.Client, action: 'reset' | 'read'): Promise<{ calls: number; ms: number; query: string }[] | null> {
  try {
    if (action === 'reset') {
      await db.query('CREATE EXTENSION IF NOT EXISTS pg_stat_statements');
      await db.query('SELECT pg_stat_statements_reset(0, (SELECT oid FROM pg_database WHERE datname = current_database()), 0)');
      return [];
    }
    const found = await db.query<{ calls: string; ms: number; query: string }>(
      `SELECT calls, total_exec_time + total_plan_time AS ms, query FROM pg_stat_statements
       WHERE dbid = (SELECT oid FROM pg_database WHERE datname = current_database()) AND query NOT LIKE '%pg_stat%'
       ORDER BY calls DESC`,
    );
    return found.rows.map((row) => ({ calls: Number(row.calls), ms: row.ms, query: row.query.replace(/\s+/g, ' ').slice(0, 160) }));
  } catch {
    return null;
  }
}
