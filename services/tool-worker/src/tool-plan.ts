import { setTimeout as sleep } from 'node:timers/promises';
import { fail, type GotchaCause, type ToolResult } from '@assistant/shared';

/** `unavailable`: the tool's MCP server could not be reached. */
export type Attempt = { kind: 'done' } | { kind: 'timeout' } | { kind: 'error' | 'unavailable'; message: string };

/** Why no attempt got done: the last one's problem, and what it says of the tool (docs/memory.md#gotchas). */
export interface GivenUp {
  problem: string;
  cause: Exclude<GotchaCause, 'arguments'>;
}

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

/** What the runner tells the turn about attempts that did not get done. */
export interface AttemptHooks {
  failed?(attempt: number, outcome: Exclude<Attempt, { kind: 'done' }>, problem: string): Promise<unknown>;
  retrying?(nextAttempt: number, problem: string): Promise<unknown>;
}

const RETRY_PAUSE_MS = 200;

const CAUSES = { timeout: 'timeout', unavailable: 'unavailable', error: 'failure' } as const;

/** Runs the plan's attempts until one gets done; answers the last one's problem when none did. */
export async function runAttempts(plan: ToolPlan, hooks: AttemptHooks = {}): Promise<GivenUp | undefined> {
  let last: GivenUp = { problem: '', cause: 'failure' };
  for (let attempt = 1; attempt <= plan.maxAttempts; attempt++) {
    const outcome = await plan.attempt();
    if (outcome.kind === 'done') return undefined;
    const problem = outcome.kind === 'timeout' ? `timed out after ${plan.timeoutMs / 1000} s` : outcome.message;
    last = { problem, cause: CAUSES[outcome.kind] };
    await hooks.failed?.(attempt, outcome, problem);
    if (attempt < plan.maxAttempts) {
      await hooks.retrying?.(attempt + 1, problem);
      await sleep(RETRY_PAUSE_MS);
    }
  }
  return last;
}

/** The result of a task that failed for good, after all its attempts. */
export function givenUp(toolName: string, problem: string, attempts: number): ToolResult {
  const error = `${toolName} failed after ${attempts === 1 ? 'its only attempt' : `${attempts} attempts`}: ${problem}`;
  return fail(error, 'Tell the user this did not work; do not claim it was done.');
}
