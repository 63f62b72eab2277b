/**
 * The reading side of a Server-Sent Events stream, for every client of a turn's events: the
 * web console, the tests and the bench. It imports nothing: the console compiles this very file
 * for the browser (services/gateway/web/tsconfig.shared.json).
 */

/** One event of the stream: `event` is `message` when the block names none; `data` is its lines joined. */
export interface SseBlock {
  id: string;
  event: string;
  data: string;
}

/** A block's fields; `undefined` for a block without data (the comments that keep a stream alive). */
export function parseSseBlock(block: string): SseBlock | undefined {
  let id = '';
  let event = 'message';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'event') event = value;
    else if (field === 'data') data.push(value);
  }
  return data.length > 0 ? { id, event, data: data.join('\n') } : undefined;
}

/** Cuts decoded text, as it arrives in pieces of any size, into the stream's events. */
export class SseParser {
  private buffer = '';

  /** The events completed by `text`; a partial block waits for the rest. */
  push(text: string): SseBlock[] {
    this.buffer += text.replace(/\r\n?/g, '\n');
    const blocks: SseBlock[] = [];
    let end: number;
    while ((end = this.buffer.indexOf('\n\n')) >= 0) {
      const block = parseSseBlock(this.buffer.slice(0, end));
      this.buffer = this.buffer.slice(end + 2);
      if (block) blocks.push(block);
    }
    return blocks;
  }
}
