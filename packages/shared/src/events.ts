import { z } from 'zod';
import type { Redis } from 'ioredis';
import { withScripts, type ScriptCommand } from './redis';
import { FINAL_STATUSES } from './turns/turn-status';

const taskStatus = z.enum(['in_progress', 'completed', 'failed', 'skipped']);
const args = z.record(z.string(), z.unknown());

/** The fields of each event type besides type, turn_id and seq (docs/events.md#event-types). */
export const eventSchemas = {
  turn_started: z.object({ session_key: z.string() }),
  task_list: z.object({
    tasks: z.array(z.object({ id: z.string(), description: z.string(), tool_name: z.string(), status: z.literal('pending') })),
  }),
  task_update: z.object({
    task_id: z.string(),
    status: taskStatus,
    error: z.string().optional(),
    duration_ms: z.number().int().optional(),
  }),
  tool_approval_request: z.object({
    approval_id: z.string(),
    task_id: z.string(),
    tool_name: z.string(),
    arguments: args,
  }),
  tool_approved: z.object({ approval_id: z.string(), task_id: z.string() }),
  tool_rejected: z.object({ approval_id: z.string(), task_id: z.string() }),
  tool_start: z.object({ task_id: z.string(), tool_name: z.string(), arguments: args }),
  tool_retry: z.object({
    task_id: z.string(),
    tool_name: z.string(),
    attempt: z.number().int(),
    max_attempts: z.number().int(),
    reason: z.string(),
  }),
  tool_timeout: z.object({ task_id: z.string(), tool_name: z.string(), timeout_seconds: z.number() }),
  tool_complete: z.object({ task_id: z.string(), tool_name: z.string(), result: z.string() }),
  tool_failed: z.object({ task_id: z.string(), tool_name: z.string(), error: z.string() }),
  ask_user_continue: z.object({ question: z.string(), remaining_tasks: z.array(z.string()) }),
  token: z.object({ delta: z.string() }),
  message: z.object({ role: z.literal('assistant'), content: z.string() }),
  iteration_limit: z.object({ max_iterations: z.number().int() }),
  error: z.object({ code: z.string(), message: z.string() }),
  done: z.object({
    status: z.enum(FINAL_STATUSES),
  }),
} as const;

export type EventType = keyof typeof eventSchemas;
export type EventFields<T extends EventType> = z.infer<(typeof eventSchemas)[T]>;
export type TurnEventInput = { [T in EventType]: { type: T } & EventFields<T> }[EventType];
/** An event as a client receives it. */
export type TurnEvent = TurnEventInput & { turn_id: string; seq: number };

export function eventKeys(prefix: string, turnId: string) {
  return {
    stream: `${prefix}:turn:${turnId}:events`,
    meta: `${prefix}:turn:${turnId}:meta`,
    channel: `${prefix}:turn:${turnId}`,
  };
}

/**
 * Appends events to the turn's stream in one atomic step (one script call for a whole batch):
 * each is dropped if the turn already sent `done` or if its dedupe key was seen (a retried job
 * re-publishing), else numbered with the next seq; then the keys are trimmed and expired, and
 * the turn's pub/sub channel rung once as a doorbell. The doorbell carries the batch
 * (`doorbellBatch`) after the id of the entry before it (kept in the meta hash as `last`; `0-0`
 * for a new stream, '' when unknown), so a reader already there needs no read of its own.
 * The shared metrics hash (KEYS[3]) gets, in the same step, 1 on each appended event's counter
 * (so a turn or tool call is counted once, exactly when its event is in the stream) and the
 * process's other increments, ARGV[5] pairs of them, that rode along. Answers each event's
 * entry id, or ''.
 */
const APPEND_EVENTS = `
local ids = {}
local bell = {redis.call('HGET', KEYS[2], 'last') or (redis.call('HEXISTS', KEYS[2], 'seq') == 1 and '' or '0-0')}
local last = false
local ttl = ARGV[1]
local done = redis.call('HEXISTS', KEYS[2], 'done') == 1
local first = 6 + 2 * tonumber(ARGV[5])
for i = 6, first - 1, 2 do redis.call('HINCRBYFLOAT', KEYS[3], ARGV[i], ARGV[i + 1]) end
for i = first, #ARGV, 4 do
  local id = ''
  if not done and (ARGV[i] == '' or redis.call('HSETNX', KEYS[2], 'k:' .. ARGV[i], 1) == 1) then
    local seq = redis.call('HINCRBY', KEYS[2], 'seq', 1)
    id = redis.call('XADD', KEYS[1], 'MAXLEN', '~', ARGV[3], '*', 'seq', seq, 'type', ARGV[i + 1], 'data', ARGV[i + 2])
    last = id
    bell[#bell + 1] = id
    bell[#bell + 1] = seq
    bell[#bell + 1] = ARGV[i + 1]
    bell[#bell + 1] = ARGV[i + 2]
    if ARGV[i + 3] ~= '' then redis.call('HINCRBYFLOAT', KEYS[3], ARGV[i + 3], 1) end
    if ARGV[i + 1] == 'done' then
      redis.call('HSET', KEYS[2], 'done', 1)
      done = true
      ttl = ARGV[2]
    end
  end
  ids[#ids + 1] = id
end
if last then
  redis.call('HSET', KEYS[2], 'last', last)
  redis.call('EXPIRE', KEYS[1], ttl)
  redis.call('EXPIRE', KEYS[2], ttl)
  redis.call('PUBLISH', ARGV[4], table.concat(bell, '\\n'))
end
return ids
`;

/** Longest a running turn's events are kept before its end (a turn may wait days for approval). */
const LIVE_TTL_SECONDS = 14 * 86_400;
const MAX_STREAM_LENGTH = 100_000;

/** Told about every event actually appended (not duplicates). */
export type EventObserver = (turnId: string, event: TurnEventInput) => void;

/** What an event batch writes to the shared metrics besides its events (SharedMetrics, runtime.ts). */
export interface EventCounters {
  /** The metrics hash. */
  key: string;
  /** The counter an event adds 1 to when it is appended, if any. */
  counterOf(event: TurnEventInput): string | undefined;
  /** The increments measured since they were last written, (field, by) pairs, for this batch to write. */
  take(): (string | number)[];
  /** Hands back what take() gave a batch that failed, for a later write. */
  giveBack(increments: (string | number)[]): void;
}

export class EventWriter {
  private readonly redis: Redis & { appendEvents: ScriptCommand };

  constructor(
    redis: Redis,
    private readonly prefix: string,
    private readonly retentionSeconds: number,
    private readonly observer: EventObserver = () => undefined,
    private readonly counters?: EventCounters,
  ) {
    this.redis = withScripts(redis, { appendEvents: { numberOfKeys: 3, lua: APPEND_EVENTS } });
  }

  /** Returns the stream entry id, or null when the event was a duplicate or came after `done`. */
  async emit(turnId: string, event: TurnEventInput, dedupeKey = ''): Promise<string | null> {
    const [id] = await this.emitMany(turnId, [{ event, dedupeKey }]);
    return id ?? null;
  }

  /** Appends events in order in one round trip; each answer as emit()'s. */
  async emitMany(turnId: string, batch: { event: TurnEventInput; dedupeKey?: string }[]): Promise<(string | null)[]> {
    if (batch.length === 0) return [];
    const keys = eventKeys(this.prefix, turnId);
    const increments = this.counters?.take() ?? [];
    const args = [LIVE_TTL_SECONDS, this.retentionSeconds, MAX_STREAM_LENGTH, keys.channel, increments.length / 2, ...increments];
    for (const { event, dedupeKey } of batch) {
      const { type, ...fields } = event;
      args.push(dedupeKey ?? '', type, JSON.stringify(fields), this.counters?.counterOf(event) ?? '');
    }
    // Without counters nothing is added, so the meta hash stands in for the metrics hash.
    const ids = (await this.redis.appendEvents(keys.stream, keys.meta, this.counters?.key ?? keys.meta, ...args).catch((error: unknown) => {
      this.counters?.giveBack(increments);
      throw error;
    })) as string[];
    return batch.map(({ event }, index) => {
      const id = ids[index] || null;
      if (id !== null) this.observer(turnId, event);
      return id;
    });
  }

  /**
   * The text of the `token` events at the end of a turn's stream: what a model call streamed
   * before it failed, so that the call made again streams only what comes after it.
   */
  async trailingTokens(turnId: string): Promise<string> {
    const { stream } = eventKeys(this.prefix, turnId);
    const deltas: string[] = [];
    for (let end = '+'; ;) {
      const page = (await this.redis.xrevrange(stream, end, '-', 'COUNT', TOKEN_PAGE)) as StreamEntry[];
      for (const [id, fields] of page) {
        if (fields[fields.indexOf('type') + 1] !== 'token') return deltas.reverse().join('');
        deltas.push((JSON.parse(fields[fields.indexOf('data') + 1] ?? '{}') as { delta?: string }).delta ?? '');
        end = `(${id}`;
      }
      if (page.length < TOKEN_PAGE) return deltas.reverse().join('');
    }
  }
}

/** Stream entries read per round trip by trailingTokens. */
const TOKEN_PAGE = 500;

/** A stream entry as read back by XRANGE: [id, [field, value, …]]. */
export type StreamEntry = [id: string, fields: string[]];

/**
 * A doorbell's batch: the id of the stream entry before it ('' when unknown) and its entries.
 * Lines: that id, then id, seq, type and data of each entry (data is JSON, which holds no raw
 * line break).
 */
export function doorbellBatch(message: string): { after: string; entries: StreamEntry[] } {
  const lines = message.split('\n');
  const entries: StreamEntry[] = [];
  for (let i = 1; i + 3 < lines.length; i += 4) {
    entries.push([lines[i] as string, ['seq', lines[i + 1] as string, 'type', lines[i + 2] as string, 'data', lines[i + 3] as string]]);
  }
  return { after: lines[0] ?? '', entries };
}

/** Builds the SSE `data:` JSON of a stream entry: type, turn_id and seq first, then the fields. */
export function entryToEvent(turnId: string, entry: StreamEntry): { id: string; type: string; json: string } {
  const [id, fields] = entry;
  const values = new Map<string, string>();
  for (let i = 0; i + 1 < fields.length; i += 2) values.set(fields[i] as string, fields[i + 1] as string);
  const get = (name: string) => values.get(name) ?? '';
  const type = get('type');
  const data = get('data');
  const body = data.length > 2 ? `,${data.slice(1)}` : '}';
  return { id, type, json: `{"type":${JSON.stringify(type)},"turn_id":"${turnId}","seq":${get('seq')}${body}` };
}
