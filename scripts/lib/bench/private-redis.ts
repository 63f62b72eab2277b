import { spawn, type ChildProcess } from 'node:child_process';
import { redisAnswers, redisServerInstalled } from '../private-redis';
import { freePort } from '../system';

/**
 * A redis-server of the bench's own (no persistence), so its CPU is the system's alone on a
 * machine where other work shares the usual Redis. Undefined when redis-server is not installed.
 */
export async function startPrivateRedis(): Promise<{ url: string; process: ChildProcess } | undefined> {
  if (!redisServerInstalled()) return undefined;
  const port = await freePort();
  const child = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no'], {
    stdio: 'ignore',
  });
  const url = `redis://127.0.0.1:${port}`;
  for (let i = 0; i < 50; i++) {
    if (await redisAnswers(url)) return { url, process: child };
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  child.kill('SIGTERM');
  return undefined;
}
