import { stopProcesses } from './lib/processes';

/**
 * Started by `npm start` in a process group of its own, with an IPC channel to it. `npm start`
 * sends the pids it runs whenever they change: `{ services, servers, deadlineMs }`. When the
 * channel closes without a goodbye, npm start died without stopping them (kill -9, a crash):
 * the processes are drained (SIGTERM, then SIGKILL after their deadline), then the private
 * servers stopped, so nothing of it is left running.
 */
interface Pids {
  services: number[];
  servers: number[];
  deadlineMs: number;
}

let pids: Pids = { services: [], servers: [], deadlineMs: 25_000 };
let done = false;

process.on('message', (message: Pids | { done: true }) => {
  if ('done' in message) done = true;
  else pids = message;
});

process.on('disconnect', () => {
  if (done) process.exit(0);
  void (async () => {
    await stopProcesses(pids.services, 'SIGTERM', pids.deadlineMs);
    // Servers in reverse order of start (Redis, then PostgreSQL); SIGINT is PostgreSQL's fast shutdown and Redis's normal one.
    for (const pid of [...pids.servers].reverse()) await stopProcesses([pid], 'SIGINT', 20_000);
    process.exit(0);
  })();
});

// Signals meant for npm start's terminal or group are not for the reaper: it leaves when npm start does.
for (const name of ['SIGINT', 'SIGHUP', 'SIGTERM'] as const) process.on(name, () => undefined);
