import type { Response, Router } from 'express';
import { z } from 'zod';
import { coalesceWrites, isFinal, tickBatched, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { keyOf, userOf } from '../http/auth';
import { HttpError, notFound } from '../http/errors';
import { defineRoutes } from '../openapi/api-route';
import { turnId } from '../routes/turns.routes';
import { sseId, STREAM_ID, type EventHub, type StreamedEvent } from './event-hub';
import { RevokedStreams } from './revoked-streams';
import { MAX_OPEN_STREAMS_PER_USER, StreamSlots } from './stream-slots';

const STREAM_HEADERS = {
  'Content-Type': 'text/event-stream; charset=utf-8',
  'Cache-Control': 'no-cache, no-transform',
  Connection: 'keep-alive',
  'X-Accel-Buffering': 'no',
};

/** Open SSE responses, so a shutdown can end them (clients reconnect elsewhere with Last-Event-ID). */
export const openStreams = new Set<Response>();

export const eventStreamApi = defineRoutes({
  turnEvents: {
    method: 'get',
    path: '/v1/turns/:id/events',
    tag: 'turns',
    summary: 'Server-Sent Events of a turn: the plan, each tool, approvals, the streamed answer',
    description:
      'Each event has `id:` (send it back in the `Last-Event-ID` header, or as `?last_event_id=`, to resume), ' +
      '`event: <type>` and `data:` one TurnEvent as JSON (see components.schemas.TurnEvent). Without `Last-Event-ID` ' +
      'the stream starts at the first event of the turn; it closes after `done`. A comment line comes at least every 15 s.',
    auth: 'user',
    ...turnId,
    responses: { 200: { description: 'the event stream', contentType: 'text/event-stream', schema: z.string() } },
  },
});

/** GET /v1/turns/:id/events (docs/events.md). */
export function sseRoutes(runtime: Runtime, hub: EventHub, heartbeatMs: number): Router {
  const { db } = runtime;
  // The streams opened in one tick read their turns together (a burst of new turns' clients).
  const turnOf = tickBatched(async (ids: string[]) => {
    const found = await db.query<{ id: string; user_id: string; status: string; settled: boolean }>(
      `SELECT id, user_id, status, finished_at < NOW() - INTERVAL '10 seconds' AS settled FROM turns WHERE id = ANY($1::uuid[])`,
      [ids],
    );
    return new Map(found.rows.map((row) => [row.id, row]));
  });
  const slots = new StreamSlots(runtime.redis, runtime.config.QUEUE_PREFIX, (error) =>
    runtime.logger.warn({ err: error }, 'stream slot bookkeeping failed'),
  );
  const revoked = new RevokedStreams(db, heartbeatMs, (error) => runtime.logger.warn({ err: error }, 'looking for revoked streams failed'));
  return apiRouter(eventStreamApi, {
    turnEvents: async (req, res, { params }) => {
      const userId = userOf(req);
      const keyId = keyOf(req);
      const turnId = params.id;
      // Read before watching: a status that is final here stays final, and one that is not
      // ends with a `done` the hub delivers.
      const turn = await turnOf(turnId);
      if (turn?.user_id !== userId) throw notFound('turn');
      // HEAD has no body to stream: it answers the headers and takes no slot.
      if (req.method === 'HEAD') return void res.writeHead(200, STREAM_HEADERS).end();

      const requested = req.get('last-event-id') ?? (typeof req.query.last_event_id === 'string' ? req.query.last_event_id : '');
      const lastId = STREAM_ID.test(requested) ? await hub.resumeFrom(turnId, requested) : '0-0';
      const slot = await slots.acquire(userId);
      if (!slot.granted) {
        throw new HttpError(
          429,
          'too_many_streams',
          `at most ${MAX_OPEN_STREAMS_PER_USER} open event streams per user; close one first`,
          undefined,
          {
            'Retry-After': String(slot.retryAfterSeconds),
          },
        );
      }

      res.writeHead(200, STREAM_HEADERS);
      // The events one read brings go out in one write.
      coalesceWrites(res);
      res.write(': connected\n\n'); // sent with the headers
      openStreams.add(res);

      let closed = false;
      let unwatch: () => void = () => undefined;
      const close = () => {
        if (closed) return;
        closed = true;
        slot.release();
        clearInterval(heartbeat);
        openStreams.delete(res);
        forget();
        unwatch();
        res.end();
      };
      const forget = revoked.add(turnId, keyId, close);
      const deliver = (event: StreamedEvent) => {
        if (closed) return;
        res.write(`id: ${sseId(event.id)}\nevent: ${event.type}\ndata: ${event.json}\n\n`);
        if (event.type === 'done') close();
      };
      const heartbeat = setInterval(() => {
        res.write(': keepalive\n\n');
        void hub.pump(turnId);
      }, heartbeatMs);
      res.on('close', close);
      // A client gone while its slot was being taken has no 'close' left to fire.
      if (req.socket.destroyed) return close();
      unwatch = await hub.watch(turnId, lastId, deliver);
      if (closed) return unwatch();
      // A finished turn has nothing more to say to a client already past its `done` (EventSource
      // reconnects with that id after every close), nor once its events have expired: end the
      // stream. A client before `done` stays: the hub is about to deliver it.
      if (isFinal(turn.status)) {
        const seen = await hub.seenDone(turnId, lastId);
        if (seen === 'yes' || (seen === 'gone' && turn.settled)) close();
      }
      return undefined;
    },
  });
}
