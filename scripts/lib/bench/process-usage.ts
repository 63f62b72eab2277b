import { spawnSync } from 'node:child_process';
import fs from 'node:fs';

const TICKS_PER_SECOND = Number(spawnSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).stdout.trim()) || 100;

/** What a process has used so far (zeros once it is gone). */
export interface Usage {
  /** User + system CPU, in ms. */
  cpuMs: number;
  /** Times it slept and was woken (voluntary context switches): each message it waited for is one. */
  wakeups: number;
  /** Write system calls (syscw): each is a message sent on a socket, or a file write. */
  writes: number;
}

const NONE: Usage = { cpuMs: 0, wakeups: 0, writes: 0 };

export function usage(pid: number): Usage {
  try {
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command name, which is in parentheses and may itself hold spaces.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    const ticks = Number(fields[11]) + Number(fields[12]);
    const count = (file: string, name: string) =>
      Number(new RegExp(`^${name}:\\s+(\\d+)`, 'm').exec(fs.readFileSync(file, 'utf8'))?.[1] ?? 0);
    return {
      cpuMs: (ticks * 1000) / TICKS_PER_SECOND,
      wakeups: count(`/proc/${pid}/status`, 'voluntary_ctxt_switches'),
      writes: count(`/proc/${pid}/io`, 'syscw'),
    };
  } catch {
    return NONE;
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
 * What a changing set of processes used between start() and stop(): a process seen only at the
 * end counts from zero (it started during the window).
 */
export class UsageMeter {
  private readonly before = new Map<number, Usage>();

  start(pids: number[]): void {
    for (const pid of pids) this.before.set(pid, usage(pid));
  }

  /** Usage per process group, over the window. */
  stop(groups: Record<string, number[]>): Record<string, Usage> {
    return Object.fromEntries(
      Object.entries(groups).map(([name, pids]) => {
        const total = { ...NONE };
        for (const pid of pids) {
          const [now, then] = [usage(pid), this.before.get(pid) ?? NONE];
          for (const key of Object.keys(total) as (keyof Usage)[]) total[key] += Math.max(0, now[key] - then[key]);
        }
        return [name, { ...total, cpuMs: Math.round(total.cpuMs) }];
      }),
    );
  }
}
