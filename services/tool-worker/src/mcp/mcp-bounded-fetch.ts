import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';

/** The most one message from an HTTP server may hold: what the SDK's stdio transport allows one line. */
const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;
const LF = 0x0a;
const CR = 0x0d;

/**
 * A fetch for the SDK's Streamable HTTP transport (its `fetch` option) under which a body fails once
 * the server has sent more than 10 MB of one message, which the SDK would otherwise hold in memory
 * however large: a JSON body counts whole, an SSE stream event by event (the bytes since its last
 * blank line), so the long-lived GET stream of a healthy server may carry any number of events.
 * `onOverflow` is told too: the SDK only logs a failed SSE stream, and the call waiting on it would
 * wait for its timeout.
 */
export function boundedFetch(onOverflow: (error: Error) => void): FetchLike {
  return async (url, init) => {
    const response = await fetch(url, init);
    if (!response.body) return response;
    const sse = response.headers.get('content-type')?.split(';')[0]?.trim().toLowerCase() === 'text/event-stream';
    const { status, statusText, headers } = response;
    return new Response(response.body.pipeThrough(limit(sse, onOverflow)), { status, statusText, headers });
  };
}

function limit(sse: boolean, onOverflow: (error: Error) => void): TransformStream<Uint8Array, Uint8Array> {
  let held = 0;
  // An SSE event ends with a blank line; lines end with CRLF, LF or CR.
  let lineStart = true;
  let afterCr = false;
  const take = (byte: number) => {
    const crlf = afterCr && byte === LF;
    afterCr = byte === CR;
    if (crlf) return;
    const lineEnd = byte === CR || byte === LF;
    held = lineEnd && lineStart ? 0 : held + 1;
    lineStart = lineEnd;
  };
  return new TransformStream({
    transform(chunk, controller) {
      if (sse) chunk.forEach(take);
      else held += chunk.length;
      if (held <= MAX_MESSAGE_BYTES) return controller.enqueue(chunk);
      const error = new Error(`it sent a message over ${MAX_MESSAGE_BYTES / 1024 / 1024} MB`);
      onOverflow(error);
      controller.error(error);
    },
  });
}
