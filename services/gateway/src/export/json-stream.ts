import { once } from 'node:events';
import type { Writable } from 'node:stream';

/** The client went away mid-export: stop reading the database. */
export class ClientGoneError extends Error {}

/**
 * Writes JSON text to a response piece by piece, waiting for `drain` whenever the socket's
 * buffer is full, so a slow client holds back the database reads instead of filling memory.
 */
export class JsonStream {
  constructor(private readonly out: Writable) {}

  async raw(text: string): Promise<void> {
    if (this.out.destroyed) throw new ClientGoneError();
    if (!this.out.write(text)) await Promise.race([once(this.out, 'drain'), once(this.out, 'close')]);
  }

  /** `"key":` followed by value, with the comma that separates it from the previous field. */
  async field(key: string, value: unknown, first = false): Promise<void> {
    await this.raw(`${first ? '' : ','}${JSON.stringify(key)}:${JSON.stringify(value ?? null)}`);
  }

  /** `[…]` from pages of values, one page in memory at a time. */
  async array(pages: AsyncIterable<unknown[]>): Promise<void> {
    await this.raw('[');
    let first = true;
    for await (const page of pages) {
      for (const value of page) {
        await this.raw(`${first ? '' : ','}${JSON.stringify(value)}`);
        first = false;
      }
    }
    await this.raw(']');
  }
}
