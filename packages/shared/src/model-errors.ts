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
