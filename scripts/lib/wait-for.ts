export interface WaitOptions {
  /** 30 s unless said otherwise. */
  timeoutMs?: number;
  /** Pause between checks: 100 ms unless said otherwise. */
  intervalMs?: number;
  /** More to say on failure, such as the processes' latest logs. */
  detail?: () => string;
}

/**
 * Polls `check` until it answers something truthy, and returns that; fails after `timeoutMs`
 * naming `what`. For the tests and the scripts alike: nothing waits a fixed time and hopes.
 */
export async function waitFor<T>(check: () => T | Promise<T>, what: string, options: WaitOptions = {}): Promise<NonNullable<T>> {
  const { timeoutMs = 30_000, intervalMs = 100, detail } = options;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`not within ${timeoutMs} ms: ${what}${detail ? `\n${detail()}` : ''}`);
    await new Promise((resolve) => setTimeout(resolve, intervalMs));
  }
}
