import { contentText, type ChatRequestBody, type FakeReply } from '../../scripts/lib/fake-model';

/**
 * Holds the fake model's answer to chosen requests until the test releases it, so a test can
 * act while a turn is provably in the middle of its model call.
 */
export class HeldReplies {
  private readonly waiting = new Map<string, (reply: FakeReply) => void>();

  /** A reply that arrives only when `release(key)` is called. */
  hold(key: string): Promise<FakeReply> {
    return new Promise((resolve) => this.waiting.set(key, resolve));
  }

  isHeld(key: string): boolean {
    return this.waiting.has(key);
  }

  get size(): number {
    return this.waiting.size;
  }

  release(key: string, reply: FakeReply = { content: `released ${key}` }): void {
    const resolve = this.waiting.get(key);
    if (!resolve) throw new Error(`no request held for ${key}`);
    this.waiting.delete(key);
    resolve(reply);
  }

  releaseAll(): void {
    for (const key of [...this.waiting.keys()]) this.release(key);
  }
}

/**
 * The user messages at the end of a request: what the turn's model reads as the new message(s).
 * System messages among them (the turn's context sits right before the newest) are skipped.
 */
export function trailingUserTexts(body: ChatRequestBody): string[] {
  const texts: string[] = [];
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i];
    if (message?.role === 'user') texts.unshift(contentText(message.content));
    else if (message?.role !== 'system') break;
  }
  return texts;
}
