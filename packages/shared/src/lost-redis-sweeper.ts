import type { Runtime } from './runtime';
import { everyInterval, singlePass } from './sweeps';
import { sessionIdleDigestJob } from './digests/session-digest-jobs';
import { addChatDelivery, addOutboxJob, type ChatEvent } from './turns/outbox';
import type { ChannelAddress } from './jobs';

/** Chat turns whose events (or sessions) are read per query; a recovery reads them all, page by page. */
const PAGE = 1_000;

/**
 * How long after its turn ended a chat event's delivery may still be waiting in Redis: its
 * retries (about 9 hours) and a 429's wait (at most 6 hours), with room to spare.
 */
const DELIVERY_HOURS = 24;

/** Chat turns unfinished or ended within DELIVERY_HOURS that sent events to their chat, oldest first. */
const CHAT_TURNS = `SELECT id FROM turns
  WHERE origin IS NOT NULL AND chat_events <> '[]'::jsonb
    AND (finished_at IS NULL OR finished_at > NOW() - make_interval(hours => ${DELIVERY_HOURS}))
  ORDER BY lane_seq`;

/** The events some of them sent to their chat, in the same order. */
const CHAT_EVENTS = 'SELECT id, origin, chat_events FROM turns WHERE id = ANY($1::uuid[]) ORDER BY lane_seq';

/**
 * Sessions with messages their digest has not covered yet, by id, each with its latest turn (whose
 * idle digest job is the one a later message would have armed).
 */
const UNDIGESTED = `SELECT s.id, t.id AS turn_id
  FROM sessions s
  JOIN LATERAL (SELECT t.id FROM turns t WHERE t.session_id = s.id ORDER BY t.lane_seq DESC LIMIT 1) t ON true
  WHERE s.id > $1 AND EXISTS (SELECT 1 FROM messages m WHERE m.session_id = s.id AND m.id > s.digested_until)
  ORDER BY s.id LIMIT ${PAGE}`;

type LostRedisRuntime = Pick<Runtime, 'db' | 'queues' | 'redis' | 'config' | 'logger'>;

/**
 * What only Redis held and PostgreSQL can tell was owed: the stuck-turn sweeper queues again
 * what an unfinished turn waits for, but a finished chat turn's deliveries queued and not yet
 * sent, and a session's delayed idle digest, wait for nothing in PostgreSQL. A key set once Redis
 * is known to hold them (`data-kept`), found missing, says Redis came back empty (or is new):
 * every chat event of a recent turn is queued again under its delivery's own id, and its
 * `deliveries` rows keep every part already sent from going out again; every session with
 * messages not yet digested has its idle digest armed again (a digest moves the session's mark in
 * the transaction that writes it, so a second one finds nothing new). So a loss costs one pass
 * over recent chat turns and sessions; a healthy Redis one EXISTS per interval. A delivery the
 * provider refused for good is tried once more per loss, no more.
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
    await rearmIdleDigests(runtime);
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
      // One after the other, in the order they were first queued.
      for (const entry of turn.chat_events) await addChatDelivery(queues, turn.id, turn.origin, entry);
      queued += turn.chat_events.length;
    }
  }
  if (queued > 0) logger.warn({ queued }, 'Redis came back empty: chat deliveries of recent turns queued again');
}

async function rearmIdleDigests({ db, queues, config }: LostRedisRuntime): Promise<void> {
  for (let after = '00000000-0000-0000-0000-000000000000'; ;) {
    const page = await db.query<{ id: string; turn_id: string }>(UNDIGESTED, [after]);
    await Promise.all(page.rows.map((row) => addOutboxJob(queues, sessionIdleDigestJob(row.id, row.turn_id, config.SESSION_IDLE_SECONDS))));
    if (page.rows.length < PAGE) return;
    after = page.rows.at(-1)?.id as string;
  }
}
