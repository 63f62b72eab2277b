import { cancelTurnIn, mergeIntoQueued, NOT_FINISHED_SQL, type DbClient, type TurnMessage } from '@assistant/shared';
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
export async function applyIfBusy(client: DbClient, sessionId: string, ifBusy: IfBusy, message: TurnMessage): Promise<BusyOutcome> {
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
        if ((await cancelTurnIn(client, turnId, { keepMessages: true })) === 'ok') cancelled.push(turnId);
      }
      return { cancelled };
    }
  }
}

/** Turns of the session not yet finished, in lane order. */
async function openTurns(client: DbClient, sessionId: string): Promise<string[]> {
  const found = await client.query<{ id: string }>(`SELECT id FROM turns WHERE session_id = $1 AND ${NOT_FINISHED_SQL} ORDER BY lane_seq`, [
    sessionId,
  ]);
  return found.rows.map((row) => row.id);
}
