import { parse as parsePostgresUrl } from 'pg-connection-string';
import { z } from 'zod';
import { httpUrl } from './http-url';
import { mcpServersSetting } from './mcp/mcp-config';
import { canonicalTimeZone, isTimeZone } from './time/local-time';

/** A variable set to blanks is unset: docker-compose.yml hands every unset one over empty. */
export const optionalString = z
  .string()
  .optional()
  .transform((v) => (v === undefined || v.trim() === '' ? undefined : v.trim()));

/** Strict booleans: only "true"/"1" and "false"/"0" (case-insensitive); "no" must not become true. */
const flag = (fallback: boolean) =>
  optionalString
    .transform((v) => v?.toLowerCase() ?? String(fallback))
    .pipe(z.enum(['true', 'false', '1', '0'], 'must be true or false'))
    .transform((v) => v === 'true' || v === '1');

const url = (fallback: string) => optionalString.transform((v) => v ?? fallback).pipe(httpUrl());
const optionalUrl = () => optionalString.pipe(httpUrl().optional());
/**
 * Connection strings are checked by scheme and by the driver's own parser: drivers accept forms
 * (socket hosts, no host) a URL parser rejects, and one they cannot parse (a port that is not a
 * number) would otherwise fail every connection, or the process with a stack trace. One problem
 * each, said without stopping the checks of the whole configuration (an `abort` would).
 */
const connectionUrl = (fallback: string, scheme: RegExp, example: string, parses: (url: string) => unknown) =>
  optionalString
    .transform((v) => v ?? fallback)
    .pipe(
      z.string().superRefine((url, ctx) => {
        if (!scheme.test(url)) ctx.addIssue(`must start with ${example}`);
        else if (!succeeds(() => parses(url)))
          ctx.addIssue('is not a connection string the driver can read (check the port, the database and %-escapes)');
      }),
    );

function succeeds(parse: () => unknown): boolean {
  try {
    parse();
    return true;
  } catch {
    return false;
  }
}

/**
 * What ioredis does with a `redis://` URL: the WHATWG parser, then its user name and password
 * decoded, and the path (or `?db=`) sent as the database number: `/abc` was a SELECT NaN, whose
 * error crashed the process with a stack trace once connected.
 */
function parseRedisUrl(url: string): void {
  const parsed = new URL(url);
  decodeURIComponent(parsed.username);
  decodeURIComponent(parsed.password);
  for (const db of [parsed.pathname.slice(1), parsed.searchParams.get('db') ?? '']) {
    if (!/^\d*$/.test(db)) throw new Error('the database is not a number');
  }
}

/**
 * Whole numbers written in decimal. Number() also reads `0x1F90`, `1e3` and `80.0`, so PORT=0x1F90
 * was port 8080: a value the operator did not mean to write is refused instead.
 */
export const int = (fallback: number, min: number, max: number) => {
  const range = `must be a whole number from ${min} to ${max}`;
  return optionalString
    .transform((v) => v ?? String(fallback))
    .pipe(z.string().regex(/^\d+$/, range))
    .pipe(z.coerce.number<string>().min(min, range).max(max, range));
};

const PROVIDER_SETTINGS = ['LLM_PROVIDER', 'OPENAI_API_KEY', 'OPENAI_BASE_URL'];

/** Every variable the processes read, with its default (README.md#configuration). */
export const configSchema = z
  .object({
    NODE_ENV: optionalString,
    PORT: int(3000, 0, 65535),
    HEALTH_PORT: int(0, 0, 65535),
    DATABASE_URL: connectionUrl('postgres://postgres@127.0.0.1:5432/assistant', /^postgres(ql)?:\/\//, 'postgres://', parsePostgresUrl),
    REDIS_URL: connectionUrl('redis://127.0.0.1:6379', /^rediss?:\/\//, 'redis://', parseRedisUrl),
    QUEUE_PREFIX: optionalString
      .transform((v) => v ?? 'assistant')
      // Braces would make Redis Cluster hash tags out of our keys; spaces break key patterns.
      .pipe(z.string().regex(/^[^\s{}]{1,100}$/, 'must be 1 to 100 characters without spaces or braces')),
    // Any token the operator chose (the contract sets no length): the gateway warns about one
    // shorter than 16 characters at start, and `npm start` generates a 32-character one.
    ADMIN_TOKEN: optionalString,
    LLM_PROVIDER: optionalString.pipe(z.enum(['openai', 'offline']).optional()),
    OPENAI_API_KEY: optionalString,
    OPENAI_BASE_URL: optionalUrl(),
    OPENAI_MODEL: optionalString.transform((v) => v ?? 'gpt-4o-mini'),
    /** Models a user may choose as `default_model` (comma-separated); unset or empty = any. */
    MODEL_ALLOWLIST: optionalString.transform((v) => {
      const models = (v ?? '')
        .split(',')
        .map((model) => model.trim())
        .filter(Boolean);
      return models.length > 0 ? models : undefined;
    }),
    MODEL_TIMEOUT_MS: int(120_000, 1_000, 600_000),
    TOOL_TIMEOUT_MS: int(10_000, 1, 600_000),
    APPROVAL_TTL_SECONDS: int(86_400, 1, 10 * 365 * 86_400),
    SESSION_IDLE_SECONDS: int(3_600, 1, 10 * 365 * 86_400),
    EVENT_RETENTION_SECONDS: int(86_400, 60, 30 * 86_400),
    WORKER_CONCURRENCY: int(16, 1, 1_000),
    /**
     * PostgreSQL connections one process keeps at most. More work than that waits for one (never
     * fails); more connections only make PostgreSQL run more backends at once than it has cores,
     * each statement costing more (README, "What measuring changed"). At least 2: a tool attempt
     * may need a second connection for refs while it holds its transaction's.
     */
    DATABASE_POOL_SIZE: int(8, 2, 1_000),
    /**
     * Model calls one agent worker process has in flight at once; the others wait their turn,
     * holding no job slot. A bound on memory: each call in flight holds its request and response.
     */
    MODEL_CONCURRENCY: int(256, 1, 100_000),
    /**
     * How long a worker's lock on a job lasts without renewal (renewed every half of it): a killed
     * worker's job is picked up within about twice this long. 10 s by default, so a turn cut by a
     * crash goes on well within a client's patience; renewing costs one short script per job slot.
     */
    JOB_LOCK_MS: int(10_000, 1_000, 600_000),
    /** How often the outbox sweeper looks for events and jobs a dead process left unpublished. */
    OUTBOX_SWEEP_MS: int(5_000, 100, 600_000),
    /**
     * How often agent workers look for unfinished turns whose jobs Redis lost (turns/stuck-turn-sweeper.ts);
     * a turn unchanged for one whole interval gets its job again. Longer than a tool's two attempts.
     */
    STUCK_TURN_SWEEP_MS: int(60_000, 100, 3_600_000),
    HISTORY_TOKEN_BUDGET: int(12_000, 500, 1_000_000),
    SHUTDOWN_TIMEOUT_MS: int(20_000, 100, 600_000),
    /**
     * SSE comment lines keep proxies from closing idle streams (docs/events.md: at least every
     * 15 s). 10 s by default: a timer fires late on a busy event loop, never early.
     */
    SSE_HEARTBEAT_MS: int(10_000, 100, 15_000),
    /** Messages a user may send per minute, over HTTP and channels alike, across all gateways; 0 = no limit. */
    RATE_LIMIT_MESSAGES_PER_MINUTE: int(60, 0, 100_000),
    /**
     * Users the chats may create per minute, across all gateways (a burst of as many at once); one
     * past it is created with its message stored, and its turns start when its place comes. 0 (the
     * default) = no limit: the contract bounds users, not how many there are; an operator facing
     * floods of new accounts turns it on.
     */
    NEW_CHAT_USERS_PER_MINUTE: int(0, 0, 100_000),
    /** Model tokens (prompt + completion) a user may spend per UTC day; 0 = no limit. Per-user override: the admin API. */
    DAILY_TOKEN_BUDGET: int(0, 0, Number.MAX_SAFE_INTEGER),
    /** Turns of one user running at once across their sessions; more wait, queued (docs/agent.md#limits). */
    MAX_ACTIVE_TURNS_PER_USER: int(4, 1, 1_000),
    /** Tool calls of one model step that run; the others get a "not run" result. */
    MAX_TOOL_CALLS_PER_STEP: int(20, 1, 1_000),
    LOG_LEVEL: optionalString.transform((v) => v ?? 'info').pipe(z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent'])),
    /** The zone of a user who has not set one; a name the zone database lacks stops the process. */
    DEFAULT_TIMEZONE: optionalString
      .transform((v) => v ?? 'UTC')
      .pipe(z.string().refine(isTimeZone, { error: (issue) => `unknown IANA time zone "${String(issue.input)}"` }))
      .transform(canonicalTimeZone),
    TELEGRAM_BOT_TOKEN: optionalString,
    TELEGRAM_WEBHOOK_SECRET: optionalString,
    TELEGRAM_API_BASE_URL: url('https://api.telegram.org'),
    TELEGRAM_BOT_USERNAME: optionalString,
    WHATSAPP_ACCESS_TOKEN: optionalString,
    WHATSAPP_APP_SECRET: optionalString,
    WHATSAPP_VERIFY_TOKEN: optionalString,
    WHATSAPP_PHONE_NUMBER_ID: optionalString,
    WHATSAPP_API_BASE_URL: url('https://graph.facebook.com/v21.0'),
    /**
     * An approved utility template whose body is one variable, `{{1}}`: a notice WhatsApp refuses
     * outside its 24-hour window is sent again as it (docs/channels.md#whatsapps-24-hour-window). Meta's names are
     * lowercase letters, digits and underscores; its languages `en`, `pt_BR` and the like.
     */
    WHATSAPP_NOTICE_TEMPLATE: optionalString.pipe(
      z
        .string()
        .regex(/^[a-z0-9_]{1,512}$/, 'must be a template name: lowercase letters, digits and underscores')
        .optional(),
    ),
    WHATSAPP_NOTICE_TEMPLATE_LANGUAGE: optionalString
      .transform((v) => v ?? 'en')
      .pipe(z.string().regex(/^[a-z]{2,3}(_[A-Z]{2})?$/, 'must be a template language code such as en or pt_BR')),
    MCP_SERVERS: mcpServersSetting,
    /** Model for voice notes, through {OPENAI_BASE_URL}/audio/transcriptions. */
    TRANSCRIPTION_MODEL: optionalString.transform((v) => v ?? 'whisper-1'),
    /** true: channel photos reach the model as image parts; false: they get the "only text" reply. */
    VISION: flag(false),
    /** How often a running chat turn's typing indicator is renewed (Telegram shows one for about 5 s). */
    TYPING_INTERVAL_MS: int(4_000, 100, 5_000),
  })
  .refine((env) => env.LLM_PROVIDER !== 'openai' || env.OPENAI_API_KEY || env.OPENAI_BASE_URL, {
    // Without either, every model call would go to api.openai.com unauthenticated and fail.
    path: ['LLM_PROVIDER'],
    message: 'openai needs OPENAI_API_KEY (for api.openai.com) or OPENAI_BASE_URL (another OpenAI-compatible endpoint)',
    // Said along with another variable's problem (zod would skip it then), unless it reads one of its own three.
    when: ({ issues }) => !issues.some((issue) => PROVIDER_SETTINGS.includes(String(issue.path?.[0]))),
  })
  .transform((env) => ({
    ...env,
    LLM_PROVIDER: env.LLM_PROVIDER ?? (env.OPENAI_API_KEY || env.OPENAI_BASE_URL ? 'openai' : 'offline'),
  }));

export type Config = z.infer<typeof configSchema>;

export class ConfigError extends Error {
  constructor(readonly problems: string[]) {
    super(`invalid configuration:\n${problems.map((p) => `  ${p}`).join('\n')}`);
  }
}

/** Parses the environment with a schema of settings; throws a ConfigError with one line per problem. */
export function parseSettings<S extends z.ZodType>(schema: S, env: NodeJS.ProcessEnv = process.env): z.output<S> {
  const result = schema.safeParse(env);
  if (result.success) return result.data;
  throw new ConfigError(result.error.issues.map((issue) => `${issue.path.join('.') || '(environment)'}: ${issue.message}`));
}

export function parseConfig(env: NodeJS.ProcessEnv = process.env): Config {
  return parseSettings(configSchema, env);
}

/** For a process entry point: invalid configuration prints one line per problem and exits 1. */
export function loadConfigOrExit(env: NodeJS.ProcessEnv = process.env): Config {
  try {
    return parseConfig(env);
  } catch (error) {
    if (error instanceof ConfigError) {
      process.stderr.write(`${error.message}\n`);
      process.exit(1);
    }
    throw error;
  }
}
