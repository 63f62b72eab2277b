import { spawn, spawnSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Redis } from 'ioredis';
import { commandLine, runningPid, stopProcesses } from './processes';
import type { PrivateService } from './private-postgres';

/** Whether a Redis answers PING at this URL; a refused connection is an answer too (false), never an unhandled error event. */
export async function redisAnswers(url: string): Promise<boolean> {
  const redis = new Redis(url, { lazyConnect: true, connectTimeout: 2_000, maxRetriesPerRequest: 0, retryStrategy: () => null });
  redis.on('error', () => undefined);
  try {
    await redis.connect();
    await redis.ping();
    return true;
  } catch {
    return false;
  } finally {
    redis.disconnect();
  }
}

export function redisServerInstalled(): boolean {
  return spawnSync('redis-server', ['--version'], { stdio: 'ignore' }).status === 0;
}

/**
 * A redis-server of npm start's own on 127.0.0.1:`port`, data in `dataDir`. Its pid file tells a
 * leftover from an earlier run (the parent was killed before it could stop it) from someone else's
 * server on that port: ours is stopped and started afresh, with a line saying so; theirs is never used.
 */
export async function startPrivateRedis(dataDir: string, port: number, say: (message: string) => void): Promise<PrivateService> {
  fs.mkdirSync(dataDir, { recursive: true });
  const pidFile = path.join(dataDir, 'redis.pid');
  const url = `redis://127.0.0.1:${port}`;
  const leftover = runningPid(pidFile);
  if (leftover !== undefined && (commandLine(leftover) ?? 'redis-server').includes('redis-server')) {
    say(`a private redis-server (pid ${leftover}) was left running by an earlier npm start: stopping it first`);
    await stopProcesses([leftover], 'SIGTERM', 10_000);
  } else if (await redisAnswers(url)) {
    throw new Error(
      `something that is not npm start's own Redis answers on 127.0.0.1:${port}: stop it, set START_REDIS_PORT, or set REDIS_URL to use it`,
    );
  }

  const child = spawn(
    'redis-server',
    [
      '--port',
      String(port),
      '--bind',
      '127.0.0.1',
      '--dir',
      dataDir,
      '--pidfile',
      pidFile,
      '--save',
      '',
      '--appendonly',
      'yes',
      '--appendfilename',
      'redis.aof',
    ],
    // Its own process group, so a Ctrl-C reaches npm start alone, which stops Redis after the processes using it.
    { stdio: 'ignore', detached: true },
  );
  child.on('error', () => undefined); // a failed spawn shows as the exit checked below
  child.unref();
  const pid = child.pid as number;
  for (let i = 0; i < 100 && !(await redisAnswers(url)); i++) {
    if (child.exitCode !== null) throw new Error(`redis-server exited at start (code ${child.exitCode}); is port ${port} free?`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (child.exitCode !== null || !(await redisAnswers(url))) throw new Error(`the private redis-server on port ${port} did not start`);
  say(`Redis was not running: started a private redis-server on port ${port} (pid ${pid}, data in ${dataDir})`);
  return {
    url,
    pid,
    stop: () => stopProcesses([pid], 'SIGTERM', 10_000),
  };
}
