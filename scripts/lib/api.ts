import { SseParser } from '@assistant/shared';

export interface StreamEvent {
  id: string;
  event: string;
  data: Record<string, unknown> & { type: string; turn_id: string; seq: number };
}

export interface ApiResponse<T = any> {
  status: number;
  body: T;
  headers: Headers;
}

/** A small client for the public API, as any HTTP client would use it. */
export class Api {
  constructor(
    readonly baseUrl: string,
    readonly apiKey?: string,
  ) {}

  as(apiKey: string): Api {
    return new Api(this.baseUrl, apiKey);
  }

  async request<T = any>(method: string, path: string, body?: unknown, headers: Record<string, string> = {}): Promise<ApiResponse<T>> {
    const res = await fetch(`${this.baseUrl}${path}`, {
      method,
      headers: {
        ...(this.apiKey ? { authorization: `Bearer ${this.apiKey}` } : {}),
        ...(body !== undefined ? { 'content-type': 'application/json' } : {}),
        ...headers,
      },
      ...(body !== undefined ? { body: typeof body === 'string' ? body : JSON.stringify(body) } : {}),
    });
    const text = await res.text();
    let parsed: unknown = text;
    try {
      parsed = text ? JSON.parse(text) : undefined;
    } catch {
      // not JSON
    }
    return { status: res.status, body: parsed as T, headers: res.headers };
  }

  get = <T = any>(path: string) => this.request<T>('GET', path);
  post = <T = any>(path: string, body?: unknown) => this.request<T>('POST', path, body ?? {});
  patch = <T = any>(path: string, body: unknown) => this.request<T>('PATCH', path, body);

  /** Creates a user with the admin token and returns a client signed in as them, with these preferences set. */
  async createUser(
    adminToken: string,
    { name = 'Test User', preferences = {} }: { name?: string; preferences?: Record<string, unknown> } = {},
  ): Promise<Api & { userId: string }> {
    const res = await new Api(this.baseUrl, adminToken).post<{ id: string; api_key: string }>('/v1/users', { display_name: name });
    if (res.status !== 201) throw new Error(`create user: ${res.status} ${JSON.stringify(res.body)}`);
    const user = Object.assign(this.as(res.body.api_key), { userId: res.body.id });
    if (Object.keys(preferences).length > 0) {
      const set = await user.patch('/v1/preferences', preferences);
      if (set.status !== 200) throw new Error(`set preferences: ${set.status} ${JSON.stringify(set.body)}`);
    }
    return user;
  }

  async send(text: string, sessionKey?: string): Promise<{ turn_id: string; session_key: string; events_url: string }> {
    const res = await this.post('/v1/messages', { text, ...(sessionKey ? { session_key: sessionKey } : {}) });
    if (res.status !== 202) throw new Error(`send: ${res.status} ${JSON.stringify(res.body)}`);
    return res.body;
  }

  /**
   * Reads a turn's SSE stream until `until` says stop (default: the `done` event) or the
   * stream ends; fails after timeoutMs.
   */
  async events(
    turnId: string,
    options: { lastEventId?: string; until?: (event: StreamEvent) => boolean; timeoutMs?: number } = {},
  ): Promise<StreamEvent[]> {
    const controller = new AbortController();
    const timeoutMs = options.timeoutMs ?? 30_000;
    const timer = setTimeout(() => controller.abort(), timeoutMs);
    const events: StreamEvent[] = [];
    const until = options.until ?? ((event) => event.event === 'done');
    try {
      const open = () =>
        fetch(`${this.baseUrl}/v1/turns/${turnId}/events`, {
          headers: {
            authorization: `Bearer ${this.apiKey}`,
            ...(options.lastEventId ? { 'last-event-id': options.lastEventId } : {}),
          },
          signal: controller.signal,
        });
      let res = await open();
      // A user holds at most 20 open streams (docs/events.md#limits): a client waits as Retry-After says,
      // spread out so that many waiting clients do not all come back at the same instant.
      while (res.status === 429) {
        const waitMs = Number(res.headers.get('retry-after') ?? 1) * 1000 * (0.5 + Math.random());
        await res.text();
        await new Promise((resolve) => setTimeout(resolve, waitMs));
        res = await open();
      }
      if (res.status !== 200 || !res.body) throw new Error(`events: ${res.status} ${await res.text()}`);
      const decoder = new TextDecoder();
      const parser = new SseParser();
      for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
        for (const block of parser.push(decoder.decode(chunk, { stream: true }))) {
          const event: StreamEvent = { ...block, data: JSON.parse(block.data) };
          events.push(event);
          if (until(event)) {
            controller.abort();
            return events;
          }
        }
      }
      return events;
    } catch (error) {
      if (controller.signal.aborted && events.length > 0 && until(events[events.length - 1] as StreamEvent)) return events;
      throw new Error(`events of ${turnId} after ${timeoutMs} ms: ${events.map((e) => e.event).join(', ')} (${String(error)})`);
    } finally {
      clearTimeout(timer);
    }
  }

  /** Sends a message and reads its turn to the end. */
  async converse(text: string, sessionKey?: string): Promise<{ turnId: string; events: StreamEvent[] }> {
    const { turn_id } = await this.send(text, sessionKey);
    return { turnId: turn_id, events: await this.events(turn_id) };
  }
}

export const UUID = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
