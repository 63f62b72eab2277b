import { STATUS_CODES, type Server } from 'node:http';
import type { Duplex } from 'node:stream';

/** What Node's HTTP parser refused, as docs/api.md#errors answers it. */
function answerFor(error: NodeJS.ErrnoException): { status: number; code: string; message: string } {
  if (error.code === 'HPE_HEADER_OVERFLOW') return { status: 431, code: 'headers_too_large', message: 'the request headers are too large' };
  if (error.code === 'ERR_HTTP_REQUEST_TIMEOUT')
    return { status: 408, code: 'request_timeout', message: 'the request took too long to arrive' };
  return {
    status: 400,
    code: 'bad_request',
    message: 'the request could not be read: a malformed request line or header (a NUL or other control character, say)',
  };
}

/**
 * Requests Node's parser refuses before any route sees them (a NUL in a header, headers past
 * the limit) get the JSON error body every other error has, not a bare status line. As Node's
 * own handler does, a socket already answering a request, or gone, is only closed.
 */
export function answerClientErrorsAsJson(server: Server): void {
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex & { _httpMessage?: { headersSent?: boolean } }) => {
    if (!socket.writable || socket._httpMessage?.headersSent === true || error.code === 'ECONNRESET') {
      socket.destroy();
      return;
    }
    const { status, code, message } = answerFor(error);
    const body = JSON.stringify({ error: { code, message } });
    socket.end(
      `HTTP/1.1 ${status} ${STATUS_CODES[status]}\r\nContent-Type: application/json; charset=utf-8\r\n` +
        `Content-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
}
