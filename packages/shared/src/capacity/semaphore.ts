/**
 * At most `size` holders at once; the others wait in arrival order. Used where a wait must be
 * backpressure (queued work waits its turn) rather than an error.
 */
export class Semaphore {
  private held = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly size: number) {}

  async use<T>(fn: () => Promise<T>): Promise<T> {
    await this.acquire();
    try {
      return await fn();
    } finally {
      this.release();
    }
  }

  private async acquire(): Promise<void> {
    if (this.held < this.size) {
      this.held += 1;
      return;
    }
    await new Promise<void>((resolve) => this.waiting.push(resolve));
  }

  private release(): void {
    const next = this.waiting.shift();
    // The slot passes straight to the next waiter, so a newcomer cannot overtake it.
    if (next) next();
    else this.held -= 1;
  }
}
