import type { Runtime } from './runtime';
import { everyInterval, singlePass } from './sweeps';
import { sessionIdleDigestJob } from './digests/session-digest-jobs';
import { runToolJob } from './turns/dispatch';
import { addChatDelivery, addOutboxJob, type ChatEvent } from './turns/outbox';
import { TOOL_RUN_TIMEOUTS } from './turns/stuck-turn-sweeper';
import { reminderNoticeJob } from './reminders/reminder-jobs';
import { InvalidJobError, type ChannelAddress } from './jobs';

/** Chat turns whose events (or sessions) are read per query; a recovery reads them all, page by page. */
const PAGE = 1_000;

/**
 * How long after its turn ended a chat event's delivery may still be waiting in Redis: its
 * retries (about 9 hours) and a 429's wait (at most 6 hours), with room to spare.
 */
const DELIVERY_HOURS = 24;

/**
 * SQL: whether a turn (of `turns`) is unfinished or ended within DELIVERY_HOURS, so that a Redis
 * come back empty queues its chat events again; their `deliveries` rows are kept longer than that
 * (agent worker's erasure/retention.ts), as such a delivery may wait in its queue past it.
 */
const CHAT_EVENTS_REQUEUED = `(finished_at IS NULL OR finished_at > NOW() - make_interval(hours => ${DELIVERY_HOURS}))`;

/** Chat turns unfinished or ended within DELIVERY_HOURS that sent events to their chat, oldest first. */
const CHAT_TURNS = `SELECT id FROM turns
  WHERE origin IS NOT NULL AND chat_events <> '[]'::jsonb AND ${CHAT_EVENTS_REQUEUED}
  ORDER BY lane_seq`;

/** The events some of them sent to their chat, in the same order. */
const CHAT_EVENTS = 'SELECT id, origin, chat_events FROM turns WHERE id = ANY($1::uuid[]) ORDER BY lane_seq';

/** Reminders whose last firing within DELIVERY_HOURS sent a notice (a skipped one sent none), oldest first. */
const FIRED_REMINDERS = `SELECT id FROM reminders
  WHERE last_fired_at > NOW() - make_interval(hours => ${DELIVERY_HOURS}) AND NOT last_fire_skipped
  ORDER BY last_fired_at, id`;

/** Their notices' payloads and firings, in the same order. */
const NOTICES = `SELECT id, user_id, text, last_fired_at FROM reminders
  WHERE id = ANY($1::uuid[]) AND last_fired_at IS NOT NULL ORDER BY last_fired_at, id`;

/**
 * Sessions with messages their digest has not covered yet, by id, each with its latest turn (whose
 * idle digest job is the one a later message would have armed).
 */
const UNDIGESTED = `SELECT s.id, t.id AS turn_id
  FROM sessions s
  JOIN LATERAL (SELECT t.id FROM turns t WHERE t.session_id = s.id ORDER BY t.lane_seq DESC LIMIT 1) t ON true
  WHERE s.id > $1 AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.id > s.digested_until)
  ORDER BY s.id LIMIT ${PAGE}`;

/**
 * The jobs of the running tools (`task.<id>` of the task the job runs, or that handed on to it),
 * with how long until the tool has run longer than its job can (`$1`, in ms): of a cancelled
 * turn too, which the stuck-turn sweeper no longer reads, and whose `done` waits for its tool.
 */
const RUNNING_TOOLS = `SELECT COALESCE(run_by, id) AS task_id, turn_id,
    GREATEST(0, EXTRACT(EPOCH FROM MAX(started_at) + make_interval(secs => $1::float8 / 1000) - NOW()) * 1000)::int AS delay_ms
  FROM tasks WHERE status = 'in_progress' GROUP BY COALESCE(run_by, id), turn_id`;

type LostRedisRuntime = Pick<Runtime, 'db' | 'queues' | 'redis' | 'config' | 'logger'>;

/**
 * What only Redis held and PostgreSQL can tell was owed: the stuck-turn sweeper queues again
 * what an unfinished turn waits for, but a finished chat turn's deliveries queued and not yet
 * sent, a fired reminder's notice and a session's delayed idle digest wait for nothing in
 * PostgreSQL. A key set once Redis is known to hold them (`data-kept`), found missing, says Redis
 * came back empty (or is new): every chat event of a recent turn, and the notice of every
 * reminder that fired as recently, is queued again under its delivery's own id, and its
 * `deliveries` rows keep every part already sent from going out again; every session with
 * messages not yet digested has its idle digest armed again (a digest moves the session's mark in
 * the transaction that writes it, so a second one finds nothing new). So a loss costs one pass
 * over recent chat turns, fired reminders and sessions; a healthy Redis one EXISTS per interval.
 * A delivery the provider refused for good is tried once more per loss, no more.
 */
export function startLostRedisSweeper(runtime: LostRedisRuntime, intervalMs: number): () => void {
  return everyInterval(lostRedisSweep(runtime), intervalMs);
}

/** One look each time it is called (a look still running makes it a no-op). */
export function lostRedisSweep(runtime: LostRedisRuntime): () => Promise<void> {
  const kept = `${runtime.config.QUEUE_PREFIX}:data-kept`;
  return singlePass(runtime.logger, 'lost redis sweep', async () => {
    if ((await runtime.redis.exists(kept)) === 1) return;
    await requeueChatDeliveries(runtime);
    await requeueReminderNotices(runtime);
    await rearmIdleDigests(runtime);
    await requeueRunningTools(runtime);
    // Only once all is queued again: a recovery cut short (Redis gone again) is run again.
    await runtime.redis.set(kept, new Date().toISOString());
  });
}

async function requeueChatDeliveries({ db, queues, logger }: LostRedisRuntime): Promise<void> {
  const ids = (await db.query<{ id: string }>(CHAT_TURNS)).rows.map((row) => row.id);
  let queued = 0;
  for (let start = 0; start < ids.length; start += PAGE) {
    const page = await db.query<{ id: string; origin: ChannelAddress; chat_events: ChatEvent[] }>(CHAT_EVENTS, [
      ids.slice(start, start + PAGE),
    ]);
    for (const turn of page.rows) {
      // One after the other, in the order they were first queued. One that no longer reads as a
      // delivery (kept under an older schema) is left out: it must not hold up the recovery.
      for (const entry of turn.chat_events) {
        try {
          await addChatDelivery(queues, turn.id, turn.origin, entry);
          queued += 1;
        } catch (error) {
          if (!(error instanceof InvalidJobError)) throw error;
          logger.warn({ err: error, turnId: turn.id }, 'a chat event kept with its turn is no delivery: not queued again');
        }
      }
    }
  }
  if (queued > 0) logger.warn({ queued }, 'Redis came back empty: chat deliveries of recent turns queued again');
}

/**
 * Queues again the notice of each reminder's last firing (with its text now: an edit since it
 * fired shows). A notice already sent skips its parts; one whose user has no chat is skipped again.
 */
async function requeueReminderNotices({ db, queues, logger }: LostRedisRuntime): Promise<void> {
  const ids = (await db.query<{ id: string }>(FIRED_REMINDERS)).rows.map((row) => row.id);
  for (let start = 0; start < ids.length; start += PAGE) {
    const page = await db.query<{ id: string; user_id: string; text: string; last_fired_at: Date }>(NOTICES, [
      ids.slice(start, start + PAGE),
    ]);
    // One after the other, in the order they fired.
    for (const reminder of page.rows) await addOutboxJob(queues, reminderNoticeJob(reminder, reminder.last_fired_at));
  }
  if (ids.length > 0) logger.warn({ queued: ids.length }, 'Redis came back empty: notices of recent reminders queued again');
}

async function rearmIdleDigests({ db, queues, config }: LostRedisRuntime): Promise<void> {
  for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
    const page = await db.query<{ id: string; turn_id: string }>(UNDIGESTED, [after]);
    await Promise.all(page.rows.map((row) => addOutboxJob(queues, sessionIdleDigestJob(row.id, row.turn_id, config.SESSION_IDLE_SECONDS))));
    if (page.rows.length < PAGE) return;
    after = page.rows.at(-1)?.id as string;
  }
}

/**
 * Queues again the job of every running tool, once it can no longer be running in a process that
 * lost its Redis (as the stuck-turn sweeper does for a running turn): the tool is taken up as
 * after a kill -9, and its end sends a cancelled turn's `done`.
 */
async function requeueRunningTools({ db, queues, config }: LostRedisRuntime): Promise<void> {
  const tools = await db.query<{ task_id: string; turn_id: string; delay_ms: number }>(RUNNING_TOOLS, [
    TOOL_RUN_TIMEOUTS * config.TOOL_TIMEOUT_MS,
  ]);
  await Promise.all(tools.rows.map((tool) => addOutboxJob(queues, runToolJob(tool.turn_id, tool.task_id, tool.delay_ms))));
}
