/**
 * Streams the model's text as `token` events, one per delta, with at most one write in flight:
 * deltas that arrive while one write runs go out together in the next (one round trip for the
 * batch, each still its own event), and so do the deltas of one network read (a write starts on
 * the next turn of the event loop, after the response's chunks at hand are parsed). A fast model
 * then costs a write per round trip instead of one per chunk, and a slow one still streams each
 * chunk at once. A call made again after a failure skips the characters its first attempt
 * streamed (`streamed`), so the deltas still add up to the answer once.
 */
export class TokenStream {
  private pending: string[] = [];
  private writing: Promise<void> | undefined;
  private failure: unknown;

  constructor(
    private readonly write: (deltas: string[]) => Promise<unknown>,
    private streamed = 0,
  ) {}

  push(text: string): void {
    const delta = text.slice(this.streamed);
    this.streamed = Math.max(0, this.streamed - text.length);
    if (delta === '') return;
    this.pending.push(delta);
    this.writing ??= new Promise((resolve) => setImmediate(resolve)).then(() => this.pump());
  }

  /** Resolves once every delta pushed so far is written; throws the first failed write. */
  async drain(): Promise<void> {
    while (this.writing) await this.writing;
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows what the write rejected with, as it was
    if (this.failure !== undefined) throw this.failure;
  }

  private async pump(): Promise<void> {
    try {
      while (this.pending.length > 0) {
        const deltas = this.pending;
        this.pending = [];
        await this.write(deltas);
      }
    } catch (error) {
      this.failure ??= error;
    } finally {
      this.writing = undefined;
    }
  }
}
