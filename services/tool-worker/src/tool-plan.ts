import type { ToolResult } from '@assistant/shared';

export type Attempt = { kind: 'done' } | { kind: 'timeout' } | { kind: 'error'; message: string };

/** How one task runs: how many attempts it may get, under which deadline, and one attempt. */
export interface ToolPlan {
  maxAttempts: number;
  timeoutMs: number;
  attempt(): Promise<Attempt>;
}

/**
 * A task that must not run: its result is recorded at once. `invalid`: the model's arguments
 * (it can correct them); `unknown`: a call that may have reached its server before a crash.
 */
export interface Refusal {
  refusal: { result: ToolResult; failure: 'invalid' | 'unknown' };
}
