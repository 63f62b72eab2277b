import type { ChannelAddress, Runtime } from '@assistant/shared';
import { enabledChannels, type ChannelClients } from './channel-clients';

/** Turns handled per beat; more wait for the next beat (a few hundred ms later). */
const BATCH = 200;

interface TypingTurn {
  id: string;
  status: string;
  origin: ChannelAddress | null;
  /** The WhatsApp message that started the turn: its read receipt carries the indicator. */
  message_id: string | null;
}

/**
 * One ticker per gateway renews the typing indicator of every running chat turn (docs/channels.md#typing).
 * Which turns and when lives in Redis (ChatTyping), claimed atomically each beat, so any number
 * of gateways share the work, a restarted gateway loses nothing, and no turn has a timer of its
 * own. Best effort: a failed indicator is logged and never retried.
 */
export function startTypingTicker(runtime: Runtime, clients: ChannelClients): { stop(): void } {
  if (enabledChannels(clients).length === 0) return { stop: () => undefined };
  const { db, logger, config, typing } = runtime;
  const interval = config.TYPING_INTERVAL_MS;

  async function show(turn: TypingTurn): Promise<void> {
    const origin = turn.origin;
    if (origin?.channel === 'telegram' && clients.telegram) return clients.telegram.sendTyping(origin);
    // WhatsApp's indicator lasts until the answer (or 25 s) and is tied to a read receipt: once per start or resume.
    // A turn no longer running still gets the receipt (the message was read), but no indicator after its answer.
    await typing.stop(turn.id);
    if (origin?.channel === 'whatsapp' && clients.whatsapp && turn.message_id) {
      await clients.whatsapp.markRead(turn.message_id, { typing: turn.status === 'running' });
    }
  }

  async function beat(): Promise<void> {
    const ids = await typing.claimDue(interval, BATCH);
    if (ids.length === 0) return;
    const found = await db.query<TypingTurn>(
      `SELECT t.id, t.status, t.origin,
         (SELECT m.external_id FROM channel_messages m WHERE m.turn_id = t.id ORDER BY m.received_at DESC LIMIT 1) AS message_id
       FROM turns t WHERE t.id = ANY($1)`,
      [ids],
    );
    const turns = new Map(found.rows.map((turn) => [turn.id, turn]));
    await Promise.all(
      ids.map(async (id) => {
        const turn = turns.get(id);
        try {
          // Waiting for the user, finished or gone: no indicator (WhatsApp's read receipt alone); a resume lists the turn again.
          if (!turn || (turn.status !== 'running' && turn.origin?.channel !== 'whatsapp')) return await typing.stop(id);
          await show(turn);
        } catch (error) {
          logger.warn({ err: error, turnId: id }, 'typing indicator failed');
        }
      }),
    );
  }

  let busy = false;
  // A turn listed meanwhile: one more beat right after the one under way.
  let again = false;
  let stopped = false;
  function tick(): void {
    if (stopped) return;
    if (busy) {
      again = true;
      return;
    }
    busy = true;
    again = false;
    beat()
      .catch((error: unknown) => logger.warn({ err: error }, 'typing ticker failed'))
      .finally(() => {
        busy = false;
        if (again) tick();
      });
  }
  // A beat a few times per interval keeps the gap between two indicators near the interval.
  const timer = setInterval(
    () => {
      if (!busy) tick();
    },
    Math.max(50, Math.min(500, Math.floor(interval / 4))),
  );
  // A chat turn this gateway starts (a webhook's message) shows at once, not at the next beat.
  typing.onStart(() => setImmediate(tick));
  return {
    stop: () => {
      stopped = true;
      clearInterval(timer);
    },
  };
}
