import type { TurnEvent } from '@assistant/shared';
import { ApiError, type Api } from './api.js';
import { SseParser } from './shared/sse-parser.js';

export type Connection = 'connecting' | 'live' | 'reconnecting' | 'closed';

export interface StreamListener {
  event(event: TurnEvent): void;
  connection(state: Connection): void;
  /** The stream cannot go on (the key was revoked, the turn is gone). */
  failed(message: string): void;
}

const FIRST_RETRY_MS = 500;
const LAST_RETRY_MS = 4000;
// The gateway sends a comment at least every 15 s; silence for longer means a dead connection.
const SILENCE_MS = 40_000;

const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Follows one turn's events to `done`. A dropped connection (network, gateway restart) is
 * resumed with Last-Event-ID, so nothing is lost; `seq` guards against showing one twice.
 */
export class TurnStream {
  private lastId = '';
  private lastSeq = 0;
  private stopped = false;
  private controller: AbortController | undefined;

  constructor(
    private readonly api: Api,
    readonly turnId: string,
    private readonly listener: StreamListener,
  ) {}

  stop(): void {
    this.stopped = true;
    this.controller?.abort();
  }

  async run(): Promise<void> {
    let retryMs = FIRST_RETRY_MS;
    this.listener.connection('connecting');
    while (!this.stopped) {
      try {
        if (await this.readUntilDropped()) break;
        retryMs = FIRST_RETRY_MS;
      } catch (error) {
        if (this.stopped) break;
        if (error instanceof ApiError && error.final) {
          this.listener.failed(error.message);
          break;
        }
      }
      if (this.stopped) break;
      this.listener.connection('reconnecting');
      await pause(retryMs);
      retryMs = Math.min(retryMs * 2, LAST_RETRY_MS);
    }
    this.listener.connection('closed');
  }

  /** Reads one connection; true once `done` arrived, false when the connection ended first. */
  private async readUntilDropped(): Promise<boolean> {
    const controller = new AbortController();
    this.controller = controller;
    let watchdog = setTimeout(() => controller.abort(), SILENCE_MS);
    try {
      const body = await this.api.events(this.turnId, this.lastId, controller.signal);
      this.listener.connection('live');
      const reader = body.getReader();
      const decoder = new TextDecoder();
      const parser = new SseParser();
      for (;;) {
        const { value, done } = await reader.read();
        if (done) return false;
        clearTimeout(watchdog);
        watchdog = setTimeout(() => controller.abort(), SILENCE_MS);
        for (const block of parser.push(decoder.decode(value, { stream: true }))) {
          if (this.accept(block.id, JSON.parse(block.data) as TurnEvent)) {
            controller.abort();
            return true;
          }
        }
      }
    } finally {
      clearTimeout(watchdog);
    }
  }

  /** Delivers an event once; true when it was `done`. */
  private accept(id: string, event: TurnEvent): boolean {
    if (id) this.lastId = id;
    if (event.seq <= this.lastSeq) return false;
    this.lastSeq = event.seq;
    this.listener.event(event);
    return event.type === 'done';
  }
}
