/** The public API (docs/api.md), as any client uses it: a bearer API key and JSON. */
export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }

  /** Retrying cannot help: the key is wrong or the thing is gone. */
  get final(): boolean {
    return this.status === 401 || this.status === 403 || this.status === 404;
  }
}

interface ErrorBody {
  error?: { code?: string; message?: string; details?: unknown };
}

const OFFLINE = "Can't reach the server. Check your connection or that the gateway is running.";

/** Turns an error answer into a sentence a person can act on. */
function plainError(status: number, body: ErrorBody): ApiError {
  const code = body.error?.code ?? 'unknown';
  const said = body.error?.message ?? '';
  const plain = (() => {
    if (status === 401) return 'The API key was not accepted. Sign in again with a valid key.';
    if (status === 400) return `The server did not accept that: ${issues(body.error?.details) || said}.`;
    if (status === 413) return 'That message is too long: keep it under 16,000 characters.';
    if (status === 429) return 'Too many requests right now. Wait a moment and try again.';
    if (status >= 500) return `The server could not do that right now (${said || status}). Try again in a moment.`;
    return said ? said[0]?.toUpperCase() + said.slice(1) + '.' : `The request failed (${status}).`;
  })();
  return new ApiError(status, code, plain);
}

function issues(details: unknown): string {
  if (!Array.isArray(details)) return '';
  return details
    .map((issue: { path?: unknown[]; message?: string }) => [issue.path?.join('.'), issue.message].filter(Boolean).join(': '))
    .join('; ');
}

export class Api {
  constructor(readonly key: string) {}

  private headers(extra: Record<string, string> = {}): Record<string, string> {
    return { authorization: `Bearer ${this.key}`, ...extra };
  }

  async request<T>(method: string, path: string, body?: unknown): Promise<T> {
    let res: Response;
    try {
      res = await fetch(path, {
        method,
        headers: this.headers(body === undefined ? {} : { 'content-type': 'application/json' }),
        ...(body === undefined ? {} : { body: JSON.stringify(body) }),
      });
    } catch {
      throw new ApiError(0, 'network', OFFLINE);
    }
    const text = await res.text();
    let parsed: unknown = undefined;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // a proxy's HTML error page: the status says enough
    }
    if (!res.ok) throw plainError(res.status, parsed ?? {});
    return parsed as T;
  }

  get = <T>(path: string) => this.request<T>('GET', path);
  post = <T>(path: string, body: unknown = {}) => this.request<T>('POST', path, body);
  patch = <T>(path: string, body: unknown) => this.request<T>('PATCH', path, body);
  put = <T>(path: string, body: unknown) => this.request<T>('PUT', path, body);
  delete = <T>(path: string) => this.request<T>('DELETE', path);

  /** A whole answer as a file (the export), with the Authorization header a plain link cannot send. */
  async download(path: string): Promise<Blob> {
    let res: Response;
    try {
      res = await fetch(path, { headers: this.headers(), cache: 'no-store' });
    } catch {
      throw new ApiError(0, 'network', OFFLINE);
    }
    if (!res.ok) throw plainError(res.status, ((await res.json().catch(() => ({}))) ?? {}) as ErrorBody);
    return res.blob();
  }

  /** Opens a turn's event stream; EventSource cannot send the Authorization header, fetch can. */
  async events(turnId: string, lastEventId: string, signal: AbortSignal): Promise<ReadableStream<Uint8Array>> {
    let res: Response;
    try {
      res = await fetch(`/v1/turns/${encodeURIComponent(turnId)}/events`, {
        headers: this.headers({ accept: 'text/event-stream', ...(lastEventId ? { 'last-event-id': lastEventId } : {}) }),
        cache: 'no-store',
        signal,
      });
    } catch {
      throw new ApiError(0, 'network', OFFLINE);
    }
    if (!res.ok || !res.body) throw plainError(res.status, ((await res.json().catch(() => ({}))) ?? {}) as ErrorBody);
    return res.body;
  }
}
