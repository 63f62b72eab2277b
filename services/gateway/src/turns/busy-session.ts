import { appendOutbox, cancelTurnIn, FINAL_STATUSES, jobId, outboxJob, type ChannelAddress, type DbClient } from '@assistant/shared';
import { HttpError } from '../http/errors';

/** What a message for a busy session does (docs/agent.md#busy-sessions). */
export const IF_BUSY = ['queue', 'merge', 'reject', 'interrupt'] as const;
export type IfBusy = (typeof IF_BUSY)[number];

export interface BusyOutcome {
  /** The queued turn the message joined (merge); undefined: queue a new turn. */
  mergedInto?: string;
  /** Turns this message cancelled (interrupt): their outboxes are flushed after the commit. */
  cancelled: string[];
}

/**
 * Applies `if_busy` inside the transaction that queues a message, with the session row already
 * locked: a turn can start only under that lock (activateNext), so a message merged here is
 * either read by the turn when it starts or, if the turn started first, finds no queued turn and
 * gets one of its own. Nothing is lost in between.
 */
export async function applyIfBusy(
  client: DbClient,
  sessionId: string,
  ifBusy: IfBusy,
  message: { text: string; origin?: ChannelAddress | undefined; startAfterMs?: number | undefined },
): Promise<BusyOutcome> {
  switch (ifBusy) {
    case 'queue':
      return { cancelled: [] };
    case 'merge': {
      const mergedInto = await mergeIntoQueued(client, sessionId, message);
      return { ...(mergedInto ? { mergedInto } : {}), cancelled: [] };
    }
    case 'reject': {
      if ((await openTurns(client, sessionId)).length > 0) {
        throw new HttpError(409, 'session_busy', 'this session is busy with another turn; send it again later, or set if_busy');
      }
      return { cancelled: [] };
    }
    case 'interrupt': {
      // Queued turns go too: the interrupting message starts at once, not behind them.
      const cancelled: string[] = [];
      for (const turnId of await openTurns(client, sessionId)) {
        if ((await cancelTurnIn(client, turnId)) === 'ok') cancelled.push(turnId);
      }
      return { cancelled };
    }
  }
}

/** Turns of the session not yet finished, in lane order. */
async function openTurns(client: DbClient, sessionId: string): Promise<string[]> {
  const found = await client.query<{ id: string }>(
    `SELECT id FROM turns WHERE session_id = $1 AND status <> ALL($2) ORDER BY lane_seq`,
    [sessionId, FINAL_STATUSES],
  );
  return found.rows.map((row) => row.id);
}

/**
 * Adds the message to the session's newest queued turn from the same place (the same chat, or
 * the API), if there is one: its answer goes where the turn's first message came from. A message
 * over the user's rate pushes the turn's start back until the limit allows, and a delayed lane
 * job comes back for it then.
 */
async function mergeIntoQueued(
  client: DbClient,
  sessionId: string,
  message: { text: string; origin?: ChannelAddress | undefined; startAfterMs?: number | undefined },
): Promise<string | undefined> {
  const merged = await client.query<{ id: string }>(
    `UPDATE turns SET merged_inputs = array_append(merged_inputs, $2),
       start_after = GREATEST(start_after, NOW() + make_interval(secs => $3::float8 / 1000))
     WHERE id = (SELECT id FROM turns WHERE session_id = $1 AND status = 'queued' ORDER BY lane_seq DESC LIMIT 1)
       AND status = 'queued' AND origin IS NOT DISTINCT FROM $4::jsonb
     RETURNING id`,
    [sessionId, message.text, message.startAfterMs ?? null, message.origin ? JSON.stringify(message.origin) : null],
  );
  const turnId = merged.rows[0]?.id;
  if (turnId && message.startAfterMs !== undefined) {
    await appendOutbox(client, turnId, [wakeJob(sessionId, turnId, message.startAfterMs)]);
  }
  return turnId;
}

/**
 * The lane job that starts a rate-delayed turn once its user's message window allows. Rounded up
 * to the second, so a flood of messages merged into one turn makes one job per second, not one each.
 */
export function wakeJob(sessionId: string, turnId: string, delayMs: number) {
  const second = Math.ceil((Date.now() + delayMs) / 1000);
  return outboxJob('agent-turns', 'lane', { sessionId }, { jobId: jobId('wake', `${turnId}.${second}`), delayMs: second * 1000 - Date.now() });
}
