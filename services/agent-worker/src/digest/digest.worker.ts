import { runAgainIn, type JobHandler, type Runtime } from '@assistant/shared';
import type { ChatModel } from '../llm';
import { digestSession } from './session-digest';

/** A session still in use is looked at again no sooner than this. */
const MIN_RECHECK_MS = 1_000;

/**
 * `digest` jobs of the session-digests queue. An idle digest that finds the session in use again
 * (a message slipped in while this job was already due) moves itself to when the session could
 * next be idle, instead of relying on that message's own job; one of a user past their daily token
 * budget moves itself to the next UTC day. Failures are thrown for the queue to retry.
 */
export function createDigestHandler(runtime: Runtime, model: ChatModel): JobHandler<'session-digests', 'digest'> {
  const { db, config, logger, metrics } = runtime;
  const deps = {
    db,
    model,
    metrics,
    defaultModel: config.OPENAI_MODEL,
    modelAllowlist: config.MODEL_ALLOWLIST,
    idleSeconds: config.SESSION_IDLE_SECONDS,
    dailyTokenBudget: config.DAILY_TOKEN_BUDGET,
  };

  return async (data, job, token) => {
    const outcome = await digestSession(deps, data.sessionId, { force: data.reason === 'reset' });
    if (outcome.kind === 'not-idle' || outcome.kind === 'over-budget') {
      return runAgainIn(job, token, Math.max(MIN_RECHECK_MS, outcome.retryInMs));
    }
    if (outcome.kind === 'digested') logger.info({ sessionId: data.sessionId, rounds: outcome.rounds }, 'session digested');
  };
}
