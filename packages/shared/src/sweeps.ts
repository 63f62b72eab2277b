import type { Logger } from './logger';

/**
 * Runs `sweep` every `intervalMs` without keeping the process alive (the safety-net sweeps of the
 * outbox, stuck turns, reminders and erasures); answers how to stop it.
 */
export function everyInterval(sweep: () => unknown, intervalMs: number): () => void {
  const timer = setInterval(() => void sweep(), intervalMs);
  timer.unref();
  return () => clearInterval(timer);
}

/**
 * A sweep's pass as one call: a call while the last one still runs does nothing, and a failure is
 * logged as `<what> failed`, never thrown, so the next interval tries again.
 */
export function singlePass(logger: Pick<Logger, 'warn'>, what: string, pass: () => Promise<void>): () => Promise<void> {
  let running = false;
  return async () => {
    if (running) return;
    running = true;
    try {
      await pass();
    } catch (error) {
      logger.warn({ err: error }, `${what} failed`);
    } finally {
      running = false;
    }
  };
}
