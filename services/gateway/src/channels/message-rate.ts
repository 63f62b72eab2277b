import type { Runtime } from '@assistant/shared';
import { hitRateLimit, MESSAGE_RATE } from '../http/rate-limit';

/**
 * Counts one chat message that makes or joins a turn (text, photo, voice transcript) against
 * the user's message rate. One over the rate is never refused (the provider would only
 * redeliver it): it is stored, merged, and its turn waits until the window allows.
 */
export async function rateDelay(runtime: Runtime, userId: string): Promise<number | undefined> {
  const limit = runtime.config.RATE_LIMIT_MESSAGES_PER_MINUTE;
  if (limit <= 0) return undefined;
  const { hits, msLeft } = await hitRateLimit(runtime.redis, runtime.config.QUEUE_PREFIX, MESSAGE_RATE.name, userId, MESSAGE_RATE.windowMs);
  return hits > limit ? Math.max(msLeft, 1) : undefined;
}
