import { APIError } from 'openai';

/** A model endpoint's error no retry can fix: bad request, bad key, unknown model. */
export function isPermanentModelError(error: unknown): boolean {
  const status = statusOf(error);
  return status !== undefined && status >= 400 && status < 500 && ![408, 409, 429].includes(status);
}

/** An error of the model endpoint (an HTTP error, or one that could not be reached or timed out), as the SDK throws it. */
export function isModelError(error: unknown): boolean {
  return error instanceof APIError;
}

/** `instanceof` leaves APIError's status type parameter as `any`. */
function statusOf(error: unknown): number | undefined {
  return error instanceof APIError ? (error.status as number | undefined) : undefined;
}

/**
 * What the user is told about a model error no retry can fix: our words only. The provider's own
 * text may quote the key or internals ("Incorrect API key provided: sk-…"); it goes to the logs.
 */
export function userMessageForModelError(error: unknown): string {
  const status = statusOf(error);
  const reason =
    status === 401 || status === 403
      ? 'it did not accept the configured credentials'
      : status === 404
        ? 'the model or endpoint was not found'
        : status === 413
          ? 'the request was too large for it'
          : 'it could not process the request';
  return `The model endpoint refused the request: ${reason}. The operator can find the details in the logs.`;
}

/**
 * How long after its step was queued a model endpoint that asks us to slow down is still waited
 * out (docs/agent.md#model-errors): a provider's rate limit under load makes turns wait, not fail.
 */
export const THROTTLED_AT_MOST_MS = 10 * 60_000;
/** Longest single pause, whatever Retry-After asks. */
const MAX_THROTTLE_PAUSE_MS = 60_000;
/** Too many requests; unavailable; overloaded (Anthropic's 529, also sent by compatible gateways). */
const THROTTLING = new Set([429, 503, 529]);

/**
 * The pause a model endpoint asked for when it refused a call for load (`retry-after-ms`, then
 * `Retry-After` in seconds or as a date; without either, or when it asks for none (zero, a date gone
 * by: the step would call again at once, over and over), 1, 2, 4… up to 32 s by `pauses`), or
 * undefined for any other error.
 */
export function throttlePauseMs(error: unknown, pauses: number, now = Date.now()): number | undefined {
  const status = statusOf(error);
  if (status === undefined || !THROTTLING.has(status)) return undefined;
  const { headers } = error as APIError;
  const asked = retryAfterMs(headers?.get('retry-after-ms'), headers?.get('retry-after'), now);
  return Math.min(MAX_THROTTLE_PAUSE_MS, asked || 1_000 * 2 ** Math.min(Math.max(0, pauses), 5));
}

function retryAfterMs(ms: string | null | undefined, after: string | null | undefined, now: number): number | undefined {
  if (ms && /^\d+(\.\d+)?$/.test(ms.trim())) return Math.ceil(Number(ms));
  if (!after) return undefined;
  if (/^\d+$/.test(after.trim())) return Number(after) * 1_000;
  const at = Date.parse(after);
  return Number.isNaN(at) ? undefined : Math.max(0, at - now);
}
