import http from 'node:http';
import os from 'node:os';
import type { Config } from './env';
import { loadConfigOrExit } from './env';
import { createDb, pingDb, withTimeout, type Db, type Queryable } from './db';
import { EventWriter, type EventCounters } from './events';
import { McpCatalog, mcpServerOf, mcpToolName } from './mcp/mcp-catalog';
import { SharedMetrics } from './metrics';
import { createLogger, type Logger } from './logger';
import { MigrationsPending, migrationsApplied, noDatabaseYet } from './migrate';
import { createQueues, type Queues } from './queues';
import { closeRedis, createClientRedis, pingRedis, type Redis } from './redis';
import { ChatTyping } from './turns/chat-typing';
import { isToolName, MAX_MODEL_TOOLS, modelTools } from './tools';
import { OutboxPublisher } from './turns/outbox';

/** What every process shares: configuration, logs, PostgreSQL, Redis, queues, the event writer. */
export interface Runtime {
  config: Config;
  logger: Logger;
  db: Db;
  redis: Redis;
  queues: Queues;
  events: EventWriter;
  outbox: OutboxPublisher;
  /** The chat turns showing "typing…", which the outbox lists and the gateways' tickers serve. */
  typing: ChatTyping;
  metrics: SharedMetrics;
  /** The MCP tools the tool worker has discovered (docs/tools.md#mcp-tools). */
  mcp: McpCatalog;
  /** Throws naming what failed when PostgreSQL or Redis does not answer within 1 s. */
  checkReady(): Promise<void>;
  close(): Promise<void>;
}

/** How long /readyz waits for each of PostgreSQL and Redis. */
const READY_WAIT_MS = 1_000;

export function createRuntime(service: string, config: Config = loadConfigOrExit()): Runtime {
  const logger = createLogger(service, config.LOG_LEVEL);
  const db = createDb(config.DATABASE_URL, { application: service, max: config.DATABASE_POOL_SIZE });
  const redis = createClientRedis(config.REDIS_URL);
  redis.on('error', (error) => logger.warn({ err: error }, 'redis connection problem'));
  // The connection's own listener above logs what went wrong; the queues pass on the same errors.
  const queues = createQueues(redis, config.QUEUE_PREFIX, (error, queue) =>
    logger.debug({ err: error, queue }, 'queue redis connection problem'),
  );
  const metrics = new SharedMetrics(redis, config.QUEUE_PREFIX);
  const finished = finishedTurns(metrics, db, logger);
  const events = new EventWriter(
    redis,
    config.QUEUE_PREFIX,
    config.EVENT_RETENTION_SECONDS,
    (turnId, event) => {
      if (event.type === 'done') finished(turnId, event.status);
    },
    eventCounters(
      metrics,
      config.MCP_SERVERS.map((server) => server.name),
    ),
  );
  const typing = new ChatTyping(redis, config.QUEUE_PREFIX);
  const migrated = migrationsApplied(db);
  return {
    config,
    logger,
    db,
    redis,
    queues,
    events,
    outbox: new OutboxPublisher(db, events, queues, typing),
    typing,
    metrics,
    mcp: new McpCatalog(
      redis,
      config.QUEUE_PREFIX,
      config.MCP_SERVERS.map((server) => server.name),
      MAX_MODEL_TOOLS - modelTools.length,
    ),
    checkReady: async () => {
      // PostgreSQL's ping and migrations check share one deadline: both answer within 1 s (docs/api.md#health-and-metrics).
      const [postgres, redisPing] = await Promise.allSettled([
        withTimeout(pingDb(db).catch(noDatabaseYet(config.DATABASE_URL)).then(migrated), READY_WAIT_MS, 'PostgreSQL did not answer'),
        pingRedis(redis, READY_WAIT_MS),
      ]);
      const problem = (result: PromiseSettledResult<void>, name: string) =>
        result.status === 'fulfilled'
          ? []
          : [result.reason instanceof MigrationsPending ? result.reason.message : `${name} did not answer`];
      const failed = [...problem(postgres, 'postgresql'), ...problem(redisPing, 'redis')];
      if (failed.length > 0) throw new Error(`not ready: ${failed.join(', ')}`);
    },
    close: async () => {
      await metrics.flush();
      await queues.close().catch(() => undefined);
      await closeRedis(redis);
      await db.end().catch(() => undefined);
    },
  };
}

/**
 * Turn and tool counters come from the events themselves, counted by the script that appends
 * them (once, when first appended); the process's other measurements ride along with its events.
 */
function eventCounters(metrics: SharedMetrics, mcpServers: string[]): EventCounters {
  return {
    key: metrics.key,
    take: () => metrics.take(),
    giveBack: (increments) => metrics.giveBack(increments),
    counterOf: (event) => {
      if (event.type === 'done') return SharedMetrics.counter('assistant_turns_total', { status: event.status });
      if (event.type === 'tool_complete') {
        const outcome = event.result.startsWith('{"success":true') ? 'success' : 'invalid';
        return SharedMetrics.counter('assistant_tool_calls_total', { tool: toolLabel(event.tool_name, mcpServers), outcome });
      }
      if (event.type === 'tool_failed') {
        return SharedMetrics.counter('assistant_tool_calls_total', { tool: toolLabel(event.tool_name, mcpServers), outcome: 'error' });
      }
      return undefined;
    },
  };
}

/** How long finished turns are gathered before their durations are read, in one statement for all. */
const FINISHED_TURNS_BATCH_MS = 50;

/**
 * Each finished turn's duration (from message accepted to its `done`) and its log line. Read for
 * every turn finished within FINISHED_TURNS_BATCH_MS at once: under load, one statement for many.
 */
export function finishedTurns(
  metrics: Pick<SharedMetrics, 'observe'>,
  db: Queryable,
  logger: Pick<Logger, 'info'>,
): (turnId: string, status: string) => void {
  let batch = new Map<string, { status: string; at: number }>();
  const read = async (turns: typeof batch) => {
    const sent = performance.now();
    const found = await db.query<{ id: string; seconds: number; session_key: string; iterations: number }>(
      `SELECT id, EXTRACT(EPOCH FROM NOW() - created_at)::float8 AS seconds, session_key, iterations FROM turns WHERE id = ANY($1::uuid[])`,
      [[...turns.keys()]],
    );
    for (const { id: turnId, session_key: sessionKey, iterations, seconds: now } of found.rows) {
      const { status, at } = turns.get(turnId) as { status: string; at: number };
      // The database's clock, less the time the turn waited here after its `done`.
      const seconds = now - (sent - at) / 1000;
      metrics.observe('assistant_turn_duration_seconds', {}, seconds);
      logger.info({ turnId, sessionKey, status, iterations, seconds }, 'turn finished');
    }
  };
  return (turnId, status) => {
    if (batch.size === 0) {
      setTimeout(() => {
        const turns = batch;
        batch = new Map();
        read(turns).catch(() => undefined);
      }, FINISHED_TURNS_BATCH_MS).unref();
    }
    batch.set(turnId, { status, at: performance.now() });
  };
}

/**
 * Label values come from our own catalogue only: a tool name a model invented would otherwise
 * become a new series on every scrape, without bound. An MCP tool counts under its configured
 * server (`<server>__*`), since a model can invent tool names under a real server's prefix too.
 */
export function toolLabel(name: string, mcpServers: readonly string[] = []): string {
  if (isToolName(name)) return name;
  const server = mcpServerOf(name);
  return server !== undefined && mcpServers.includes(server) ? mcpToolName(server, '*') : 'other';
}

/**
 * One shutdown path: on SIGINT/SIGTERM run `stop` (stop intake, finish or hand back work, close
 * connections) under a deadline; exit 0 when it finished cleanly, 128 + signal when forced.
 * `stop` names each step as it begins, so a forced exit says what it was still waiting for.
 */
export function handleShutdown(logger: Logger, deadlineMs: number, stop: (step: (name: string) => void) => Promise<void>): void {
  let stopping = false;
  let step = 'starting';
  const onSignal = (signal: NodeJS.Signals) => {
    if (stopping) return;
    stopping = true;
    logger.info({ signal }, 'shutting down');
    const code = 128 + os.constants.signals[signal];
    const timer = setTimeout(() => {
      logger.warn({ deadlineMs, step }, 'shutdown deadline passed, exiting');
      process.exit(code);
    }, deadlineMs);
    timer.unref();
    stop((name) => (step = name)).then(
      () => process.exit(0),
      (error: unknown) => {
        logger.error({ err: error, step }, 'shutdown failed');
        process.exit(code);
      },
    );
  };
  // SIGHUP: the terminal was closed; drain like any other stop rather than die mid-job.
  for (const name of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.once(name, onSignal);
}

/** /healthz and /readyz on a small port of a worker's own (HEALTH_PORT; 0 = none). */
export function startHealthServer(port: number, checkReady: () => Promise<void>): http.Server | undefined {
  if (port === 0) return undefined;
  const server = http.createServer((req, res) => {
    const send = (status: number, body: object) => {
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
    };
    if (req.url === '/healthz') return send(200, { status: 'ok' });
    if (req.url === '/readyz') {
      checkReady().then(
        () => send(200, { status: 'ready' }),
        (error: unknown) => send(503, { status: 'not ready', error: error instanceof Error ? error.message : String(error) }),
      );
      return undefined;
    }
    return send(404, { error: 'not found' });
  });
  // A taken port must not take the worker down with it: the worker still works, only unprobed.
  server.on('error', (error) => process.stderr.write(`health port ${port}: ${error.message}\n`));
  server.listen(port);
  return server;
}
