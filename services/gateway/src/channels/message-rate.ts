import type { Runtime } from '@assistant/shared';
import { hitRateLimit, MESSAGE_RATE } from '../http/rate-limit';

/**
 * Counts one chat message that makes or joins a turn (text, photo, voice transcript) against
 * the user's message rate. One over the rate is never refused (the provider would only
 * redeliver it): it is stored, merged, and its turn waits until the window allows. A user
 * created past NEW_CHAT_USERS_PER_MINUTE (`admissionMs`, identities.ts) waits for its admission too.
 */
export async function rateDelay(runtime: Runtime, userId: string, admissionMs?: number): Promise<number | undefined> {
  const limit = runtime.config.RATE_LIMIT_MESSAGES_PER_MINUTE;
  if (limit <= 0) return admissionMs;
  const { hits, msLeft } = await hitRateLimit(runtime.redis, runtime.config.QUEUE_PREFIX, MESSAGE_RATE.name, userId, MESSAGE_RATE.windowMs);
  const overMs = hits > limit ? Math.max(msLeft, 1) : undefined;
  return overMs === undefined || admissionMs === undefined ? (overMs ?? admissionMs) : Math.max(overMs, admissionMs);
}
