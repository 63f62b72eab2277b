import fs from 'node:fs';

/** Whether a process with this pid exists (signal 0 checks without sending anything). */
export function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user.
    return (error as NodeJS.ErrnoException).code === 'EPERM';
  }
}

/** Sends a signal to a process that may already be gone. */
export function signal(pid: number, name: NodeJS.Signals): void {
  try {
    process.kill(pid, name);
  } catch {
    // already gone
  }
}

/** Waits until every pid has exited; answers the ones still alive after timeoutMs. */
export async function waitForExit(pids: number[], timeoutMs: number): Promise<number[]> {
  const deadline = Date.now() + timeoutMs;
  let left = pids.filter(alive);
  while (left.length > 0 && Date.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
    left = left.filter(alive);
  }
  return left;
}

/** Asks politely, then insists: `first` now, SIGKILL for what is left after timeoutMs. */
export async function stopProcesses(pids: number[], first: NodeJS.Signals, timeoutMs: number): Promise<void> {
  for (const pid of pids) signal(pid, first);
  const left = await waitForExit(pids, timeoutMs);
  for (const pid of left) signal(pid, 'SIGKILL');
  await waitForExit(left, 5_000);
}

/** The pid in the first line of a pid file, when the file exists and that process still runs. */
export function runningPid(pidFile: string): number | undefined {
  let text: string;
  try {
    text = fs.readFileSync(pidFile, 'utf8');
  } catch {
    return undefined;
  }
  const pid = Number(text.split('\n')[0]?.trim());
  return Number.isInteger(pid) && pid > 0 && alive(pid) ? pid : undefined;
}

/** The command line of a running process where /proc exists (Linux); undefined elsewhere. */
export function commandLine(pid: number): string | undefined {
  try {
    return fs.readFileSync(`/proc/${pid}/cmdline`, 'utf8').replace(/\0/g, ' ').trim();
  } catch {
    return undefined;
  }
}
