import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** User + system CPU a process has used so far, in ms (0 once it is gone). */
export function cpuMs(pid: number): number {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    return (ticks * 1000) / TICKS_PER_SECOND;
  } catch {
    return 0;
  }
}

/** Peak resident set size of a process (VmHWM), in MiB. */
export function peakRssMiB(pid: number | undefined): number | null {
  if (!pid) return null;
  try {
    const match = /VmHWM:\s+(\d+) kB/.exec(fs.readFileSync(`/proc/${pid}/status`, 'utf8'));
    return match ? Math.round(Number(match[1]) / 102.4) / 10 : null;
  } catch {
    return null;
  }
}

/**
 * CPU used by a changing set of processes between start() and stop(): a process seen only at
 * the end counts from zero (it started during the window).
 */
export class CpuMeter {
  private readonly before = new Map<number, number>();

  start(pids: number[]): void {
    for (const pid of pids) this.before.set(pid, cpuMs(pid));
  }

  /** CPU ms per process group, over the window. */
  stop(groups: Record<string, number[]>): Record<string, number> {
    return Object.fromEntries(
      Object.entries(groups).map(([name, pids]) => [
        name,
        Math.round(pids.reduce((sum, pid) => sum + Math.max(0, cpuMs(pid) - (this.before.get(pid) ?? 0)), 0)),
      ]),
    );
  }
}
