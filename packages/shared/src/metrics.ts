import type { Redis } from 'ioredis';
import { withScripts, type ScriptCommand } from './redis';

/**
 * Counters and histograms that every process adds to and the gateway's /metrics reports: the
 * values live in one Redis hash per prefix, so a turn finished on any agent worker shows up
 * whichever gateway copy is scraped.
 */
interface MetricSpec {
  help: string;
  type: 'counter' | 'histogram';
  buckets?: number[];
}

/** Adds each (field, increment) pair of ARGV to the hash: one call for everything one tick measured. */
const ADD_ALL = `
for i = 1, #ARGV, 2 do redis.call('HINCRBYFLOAT', KEYS[1], ARGV[i], ARGV[i + 1]) end
return 0`;

const SECONDS = [0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

export const SHARED_METRICS = {
  assistant_turns_total: { help: 'Turns finished, by final status.', type: 'counter' },
  assistant_turn_duration_seconds: { help: 'From message accepted to turn finished.', type: 'histogram', buckets: SECONDS },
  assistant_model_calls_total: { help: 'Model calls, by outcome.', type: 'counter' },
  assistant_model_call_duration_seconds: { help: 'Duration of one model call.', type: 'histogram', buckets: SECONDS },
  assistant_model_tokens_total: { help: 'Tokens reported by the model, by kind (prompt, completion).', type: 'counter' },
  assistant_tool_calls_total: { help: 'Tool calls finished, by tool and outcome (success, invalid, error).', type: 'counter' },
} satisfies Record<string, MetricSpec>;

export type SharedMetricName = keyof typeof SHARED_METRICS;
type Labels = Record<string, string>;

function labelText(labels: Labels): string {
  const entries = Object.entries(labels).sort(([a], [b]) => a.localeCompare(b));
  if (entries.length === 0) return '';
  return `{${entries.map(([k, v]) => `${k}="${v.replace(/\\/g, '\\\\').replace(/"/g, '\\"').replace(/\n/g, '\\n')}"`).join(',')}}`;
}

/**
 * How long increments wait for this process's next event batch to write them (EventWriter), else
 * go alone. A model step's measurements are followed by its events within milliseconds, so they
 * rarely need a round trip of their own.
 */
const CARRY_MS = 50;

export class SharedMetrics {
  /** The Redis hash every process adds to. */
  readonly key: string;
  /** Increments not yet written, by hash field. */
  private pending = new Map<string, number>();
  private flushTimer: NodeJS.Timeout | undefined;
  private readonly redis: Redis & { addMetrics: ScriptCommand };

  constructor(redis: Redis, prefix: string) {
    this.redis = withScripts(redis, { addMetrics: { numberOfKeys: 1, lua: ADD_ALL } });
    this.key = `${prefix}:metrics`;
  }

  /** Best effort: a metric that cannot be written must never fail the work it measures. */
  inc(name: SharedMetricName, labels: Labels = {}, by = 1): void {
    this.add(SharedMetrics.counter(name, labels), by);
  }

  /** The hash field of a counter with these labels. */
  static counter(name: SharedMetricName, labels: Labels = {}): string {
    return `${name}${labelText(labels)}`;
  }

  /**
   * One sample: only the bucket it falls in and the sum are written; render() makes the buckets
   * cumulative and derives the count, as Prometheus expects.
   */
  observe(name: SharedMetricName, labels: Labels, value: number): void {
    const spec: MetricSpec = SHARED_METRICS[name];
    const le = (spec.buckets ?? []).find((bound) => value <= bound);
    this.add(`${name}${RAW_BUCKET}${labelText({ ...labels, le: le === undefined ? '+Inf' : String(le) })}`, 1);
    this.add(`${name}_sum${labelText(labels)}`, value);
  }

  /** The increments not yet written, as (field, by) pairs, now left to the caller to write. */
  take(): (string | number)[] {
    // Asked by every event batch, token deltas included: most find nothing pending.
    if (this.pending.size === 0) return [];
    clearTimeout(this.flushTimer);
    this.flushTimer = undefined;
    const increments = [...this.pending].flat();
    this.pending = new Map();
    return increments;
  }

  /**
   * Puts back increments whose write failed (taken by an event batch or a flush): a Redis error
   * delays counts, never loses them. They go with the next write, which a new increment, an event
   * batch or a scrape brings; no timer of their own retries while Redis is away.
   */
  giveBack(increments: (string | number)[]): void {
    for (let i = 0; i + 1 < increments.length; i += 2) this.merge(String(increments[i]), Number(increments[i + 1]));
  }

  private add(field: string, by: number): void {
    this.flushTimer ??= setTimeout(() => void this.flush(), CARRY_MS).unref();
    this.merge(field, by);
  }

  private merge(field: string, by: number): void {
    this.pending.set(field, (this.pending.get(field) ?? 0) + by);
  }

  /** Writes what is pending now (before /metrics renders, and at shutdown). */
  async flush(): Promise<void> {
    const increments = this.take();
    if (increments.length > 0) await this.redis.addMetrics(this.key, ...increments).catch(() => this.giveBack(increments));
  }

  /** Prometheus text for every stored series, with HELP and TYPE lines. */
  async render(): Promise<string> {
    await this.flush(); // this process's own increments show
    const values = await this.redis.hgetall(this.key);
    const lines: string[] = [];
    for (const [name, spec] of Object.entries(SHARED_METRICS) as [string, MetricSpec][]) {
      lines.push(`# HELP ${name} ${spec.help}`, `# TYPE ${name} ${spec.type}`);
      const series = Object.keys(values)
        .filter((field) => field === name || field.startsWith(`${name}{`) || field.startsWith(`${name}_sum`))
        .sort();
      if (spec.type === 'histogram') lines.push(...histogramLines(name, spec.buckets ?? [], values));
      for (const field of series) lines.push(`${field} ${values[field]}`);
    }
    return `${lines.join('\n')}\n`;
  }
}

/** Field marker of a histogram's per-bucket (not cumulative) counts. */
const RAW_BUCKET = '_raw_bucket';

/** Cumulative `_bucket` and `_count` lines of a histogram from its per-bucket counts, per label set. */
function histogramLines(name: string, bounds: number[], values: Record<string, string>): string[] {
  const perLabels = new Map<string, { labels: Labels; counts: Map<string, number> }>();
  for (const [field, value] of Object.entries(values)) {
    if (!field.startsWith(`${name}${RAW_BUCKET}{`)) continue;
    const labels = parseLabels(field.slice(`${name}${RAW_BUCKET}`.length));
    const { le = '+Inf', ...rest } = labels;
    const key = labelText(rest);
    const entry = perLabels.get(key) ?? { labels: rest, counts: new Map<string, number>() };
    entry.counts.set(le, (entry.counts.get(le) ?? 0) + Number(value));
    perLabels.set(key, entry);
  }
  const lines: string[] = [];
  for (const [key, { labels, counts }] of [...perLabels.entries()].sort(([a], [b]) => a.localeCompare(b))) {
    let total = 0;
    for (const le of [...bounds.map(String), '+Inf']) {
      total += counts.get(le) ?? 0;
      lines.push(`${name}_bucket${labelText({ ...labels, le })} ${total}`);
    }
    lines.push(`${name}_count${key} ${total}`);
  }
  return lines;
}

/** The labels of a `{k="v",…}` text written by labelText. */
function parseLabels(text: string): Labels {
  const labels: Labels = {};
  for (const match of text.matchAll(/(\w+)="((?:[^"\\]|\\.)*)"/g)) {
    labels[match[1] as string] = (match[2] as string).replace(/\\n/g, '\n').replace(/\\(["\\])/g, '$1');
  }
  return labels;
}
