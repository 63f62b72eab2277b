import type { ErrorRequestHandler, RequestHandler } from 'express';
import { ZodError } from 'zod';
import type { Logger } from '@assistant/shared';

/** An error answered as docs/api.md#errors says: `{"error":{"code","message","details"}}`. */
export class HttpError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly details?: unknown,
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
  }
}

/** The 400 of a validation failure (docs/api.md#errors) for one part of the request, as a zod-like issue. */
export const invalidInput = (path: (string | number)[], message: string) =>
  new HttpError(400, 'validation_failed', `the request is not valid: ${message}`, [{ code: 'custom', path, message }]);

export const notFound = (what = 'resource') => new HttpError(404, 'not_found', `${what} not found`);

/** 401, with the challenge that says how to authenticate (RFC 6750: a bearer token). */
export const unauthorized = (message: string, challenge = 'Bearer') =>
  new HttpError(401, 'unauthorized', message, undefined, { 'WWW-Authenticate': challenge });

/** The whole path, also where a router mounts this under a path of its own (req.path is then the rest). */
export const notFoundRoute: RequestHandler = (req) => {
  throw new HttpError(404, 'not_found', `no route for ${req.method} ${req.baseUrl}${req.path}`);
};

/** Maps every error to JSON; unexpected ones are logged and answered without internals. */
export function errorHandler(logger: Logger): ErrorRequestHandler {
  return (error: unknown, req, res, _next) => {
    const http = toHttpError(error);
    // A 503 the API answers on purpose (ADMIN_TOKEN unset) is not a failure: any client could fill the logs with it.
    if (http.status >= 500 && !(error instanceof HttpError)) {
      logger.error({ err: error, method: req.method, path: req.path }, 'request failed');
    }
    if (res.headersSent) {
      res.end();
      return;
    }
    res.set(http.headers);
    res.status(http.status).json({
      error: { code: http.code, message: http.message, ...(http.details !== undefined ? { details: http.details } : {}) },
    });
  };
}

/** The client errors the API answers (CONTRACT: 400, 401, 403, 404, 409, 413, 429). */
const CLIENT_ERROR_STATUSES = [400, 401, 403, 404, 409, 413, 429];

function toHttpError(error: unknown): HttpError {
  if (error instanceof HttpError) return error;
  if (error instanceof ZodError) {
    return new HttpError(400, 'validation_failed', 'the request is not valid', error.issues);
  }
  const type = (error as { type?: string } | null)?.type;
  if (type === 'entity.too.large') {
    const limit = (error as { limit?: number }).limit ?? 1 << 20;
    return new HttpError(413, 'payload_too_large', `the request body is over ${limit / (1 << 20)} MiB`);
  }
  if (type === 'entity.parse.failed') return new HttpError(400, 'invalid_json', 'the request body is not valid JSON');
  if (type === 'charset.unsupported') return new HttpError(400, 'unsupported_encoding', 'the request body must be UTF-8');
  // Content-Encoding names the body's compression, not its charset.
  if (type === 'encoding.unsupported') {
    return new HttpError(400, 'unsupported_encoding', 'the request body must be sent uncompressed or with gzip, deflate or br');
  }
  // A client error of a library keeps its status when the API answers it (docs/api.md#errors); any other is a 400.
  const status = (error as { status?: number } | null)?.status;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new HttpError(CLIENT_ERROR_STATUSES.includes(status) ? status : 400, 'bad_request', 'the request could not be read');
  }
  if (isUnavailable(error)) return new HttpError(503, 'unavailable', 'a backing service is unavailable; try again shortly');
  return new HttpError(500, 'internal', 'something went wrong on our side');
}

/**
 * Connection failures of PostgreSQL or Redis: the client should retry, nothing was lost. A host
 * name that does not resolve is one too: a compose service's name while its container restarts;
 * so is a Redis that takes the connection but does not answer (ioredis's commandTimeout).
 */
function isUnavailable(error: unknown): boolean {
  const text = error instanceof Error ? `${error.name} ${error.message} ${(error as { code?: string }).code ?? ''}` : '';
  return /ECONNREFUSED|ECONNRESET|ETIMEDOUT|ENOTFOUND|EAI_AGAIN|EHOSTUNREACH|ENETUNREACH|Connection is closed|connection terminated|MaxRetriesPerRequest|Command timed out|Stream isn't writeable|timeout exceeded when trying to connect|57P0[1-3]|53300/i.test(
    text,
  );
}
