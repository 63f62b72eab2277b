import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';

/**
 * The model client's `fetch` (the openai SDK's `fetch` option): a request over node:http with the
 * default keep-alive agents, its response body streamed as the SDK reads it. Node's global fetch
 * wraps every call in the fetch standard's request and response machinery: measured with 1,000
 * streamed calls in flight, this costs about a quarter less CPU per call and a fifth less peak
 * memory. What the SDK sends is a URL, a method, headers, an abort signal and a text body;
 * anything else goes to the global fetch.
 */
export function httpFetch(input: string | URL | Request, init: RequestInit = {}): Promise<Response> {
  const { body } = init;
  if (input instanceof Request || (body != null && typeof body !== 'string')) return fetch(input, init);
  const url = new URL(input);
  const send = url.protocol === 'https:' ? https.request : http.request;
  return new Promise((resolve, reject) => {
    const request = send(
      url,
      {
        method: init.method ?? 'GET',
        headers: Object.fromEntries(new Headers(init.headers)),
        ...(init.signal ? { signal: init.signal } : {}),
      },
      (response) => {
        try {
          resolve(toResponse(response, init.method));
        } catch (error) {
          // e.g. a status outside 200–599, which a Response cannot carry: the call fails, the process does not.
          response.destroy();
          reject(error instanceof Error ? error : new Error(String(error)));
        }
      },
    );
    request.on('error', reject);
    request.end(body ?? undefined);
  });
}

function toResponse(response: http.IncomingMessage, method: string | undefined): Response {
  const headers = new Headers();
  for (let i = 0; i < response.rawHeaders.length; i += 2) headers.append(response.rawHeaders[i]!, response.rawHeaders[i + 1]!);
  const status = response.statusCode ?? 502;
  const empty = status === 204 || status === 304 || method === 'HEAD';
  if (empty) response.resume();
  const body = empty ? null : (Readable.toWeb(response) as ReadableStream<Uint8Array>);
  return new Response(body, { status, statusText: response.statusMessage ?? '', headers });
}
