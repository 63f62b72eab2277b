import { DelayedError, type Job } from 'bullmq';
import {
  activateNext,
  addJob,
  askUser,
  awaitApproval,
  dispatch,
  expireApproval,
  failTurn,
  jobId,
  jobProcessor,
  laneSettings,
  loadTurnState,
  msUntilDue,
  outboxEvent,
  runAgainIn,
  sessionsWaitingForSlot,
  Semaphore,
  SessionHistories,
  type JobProcessor,
  type Runtime,
  type TurnMachine,
  type TurnState,
  THROTTLED_AT_MOST_MS,
  throttlePauseMs,
  TURN_GAVE_UP,
} from '@assistant/shared';
import { isModelError, isPermanentModelError, userMessageForModelError, type ChatModel } from '../llm';
import { HISTORY_KEPT_CHARS, HISTORY_ROWS } from './context';
import { decide } from './decide';
import { ModelCallParking } from './model-call-parking';
import { runModelStep } from './model-step';
import { TurnPhotos } from './turn-photo';

/** More decisions than any turn needs in one job; a bug must not spin forever. */
const MAX_DECISIONS_PER_JOB = 200;

/** The agent-turns processor, with the model calls its jobs parked (to let them finish on shutdown). */
export type TurnProcessor = JobProcessor<'agent-turns'> & { readonly parking: ModelCallParking };

/** The agent-turns processor: lane starts, turn steps and approval expiry. */
export function createTurnProcessor(runtime: Runtime, model: ChatModel): TurnProcessor {
  const { db, outbox, logger, config } = runtime;
  const machine: TurnMachine = {
    db,
    outbox,
    approvalTtlSeconds: config.APPROVAL_TTL_SECONDS,
    maxToolCallsPerStep: config.MAX_TOOL_CALLS_PER_STEP,
    ...laneSettings(config),
  };
  const modelDeps = {
    machine,
    events: runtime.events,
    model,
    defaultModel: config.OPENAI_MODEL,
    modelAllowlist: config.MODEL_ALLOWLIST,
    historyTokenBudget: config.HISTORY_TOKEN_BUDGET,
    maxToolCallsPerStep: config.MAX_TOOL_CALLS_PER_STEP,
    metrics: runtime.metrics,
    mcp: runtime.mcp,
    photos: new TurnPhotos(config, logger),
    dailyTokenBudget: config.DAILY_TOKEN_BUDGET,
    modelCalls: new Semaphore(config.MODEL_CONCURRENCY),
    histories: new SessionHistories(HISTORY_ROWS, HISTORY_KEPT_CHARS),
  };
  // Jobs of this processor running now: each holds one of the worker's slots.
  let running = 0;
  const parking = new ModelCallParking(config.JOB_LOCK_MS, logger, () => running >= config.WORKER_CONCURRENCY);

  /**
   * Starts the session's next turn if it may, then gives the user's other waiting sessions their
   * chance: a slot of MAX_ACTIVE_TURNS_PER_USER may have freed here.
   */
  async function startLanes(sessionId: string): Promise<void> {
    const started = await activateNext(machine, sessionId);
    const early = started ? undefined : await msUntilDue(db, sessionId);
    if (early !== undefined) {
      await addJob(
        runtime.queues,
        'agent-turns',
        'lane',
        { sessionId },
        { jobId: jobId('rewake', `${sessionId}.${Date.now()}`), delay: early },
      );
    }
    for (const other of await sessionsWaitingForSlot(db, sessionId, config.MAX_ACTIVE_TURNS_PER_USER)) {
      await activateNext(machine, other);
    }
  }

  /**
   * Takes decisions until the turn waits for something else. Each transition publishes what it
   * committed; entries left over (a crash before publishing, a failure written elsewhere) are
   * published as soon as the turn is read.
   */
  async function advance(turnId: string, published: string[], job: Job, token: string | undefined): Promise<void> {
    const parkedFailure = parking.takeFailure(job.id);
    // eslint-disable-next-line @typescript-eslint/only-throw-error -- rethrows the parked model call's error, as it was
    if (parkedFailure) throw parkedFailure;
    for (let i = 0; i < MAX_DECISIONS_PER_JOB; i++) {
      // The first load removes the batch that queued this job from the outbox.
      const state = await loadTurnState(db, turnId, i === 0 ? published : []);
      if (!state) return;
      await outbox.republish(turnId, state.turn.origin, state.outbox);
      if (state.turn.status === 'cancelled') return closeCancelled(state);
      const decision = decide(state, job.id as string);
      // After a dispatch, once the turn waits for the user, or after a model step that sent a
      // tool or ended the turn, the next decision is always "wait": stop without reading the turn again. A transition that lost a race (false)
      // re-reads and decides again.
      switch (decision.kind) {
        case 'wait':
          return;
        case 'dispatch':
          if (await dispatch(machine, state, decision.task)) return;
          break;
        case 'await-approval':
          if (await awaitApproval(machine, state)) return;
          break;
        case 'ask-user':
          if (await askUser(machine, state, decision.remaining)) return;
          break;
        case 'call-model':
          // Parks the job (throwing DelayedError) when the model takes a while to answer.
          if (await parking.run(job, token, runModelStep(modelDeps, state, job.id as string))) return;
          break;
      }
    }
    throw new Error(`turn ${turnId} took more than ${MAX_DECISIONS_PER_JOB} decisions in one job`);
  }

  /**
   * A turn cancelled while one of its tools ran ended without its `done` (continue-and-cancel.ts):
   * the `advance` that tool's end queues sends it, after the tool's own events. Any other job
   * that finds the turn cancelled may send it again: a stream takes nothing after its `done`.
   */
  async function closeCancelled({ turn, tasks }: TurnState): Promise<void> {
    if (tasks.some((task) => task.status === 'in_progress')) return;
    await outbox.publish(turn.id, turn.origin, [outboxEvent({ type: 'done', status: 'cancelled' }, `${turn.id}:done`)]);
  }

  const processor = jobProcessor('agent-turns', {
    lane: ({ sessionId }) => startLanes(sessionId),
    advance: ({ turnId, published = [] }, job, token) =>
      advance(turnId, published, job, token).catch(
        (error: unknown) => waitOutThrottling(job, token, error) ?? giveUpIfFinal(turnId, job, error),
      ),
    'expire-approval': async ({ approvalId }) => {
      const turnId = await expireApproval(db, approvalId, config.MAX_ACTIVE_TURNS_PER_USER);
      if (turnId) await outbox.flush(turnId);
    },
  });
  const counted = async (job: Job, token?: string) => {
    running += 1;
    try {
      await processor(job, token);
    } finally {
      running -= 1;
    }
  };
  return Object.assign(counted, { queue: processor.queue, parking });

  /**
   * A model endpoint that refused a call for load (429, 503) is asked again after the pause it
   * names, without using up one of the step's attempts, for up to THROTTLED_AT_MOST_MS after the
   * step was queued; past that, its refusals count as any failure's.
   */
  function waitOutThrottling(job: Job, token: string | undefined, error: unknown): Promise<never> | undefined {
    if (!token || Date.now() - job.timestamp >= THROTTLED_AT_MOST_MS) return undefined;
    const pause = throttlePauseMs(error, job.attemptsStarted - job.attemptsMade - 1);
    if (pause === undefined) return undefined;
    logger.warn({ jobId: job.id, pauseMs: pause }, 'model endpoint asked to slow down: the step waits');
    return runAgainIn(job, token, pause);
  }

  /**
   * A failing step is retried with backoff (the queue's attempts); when the error cannot be
   * fixed by retrying, or this was the last attempt, the turn fails with a clear error instead
   * of hanging.
   */
  async function giveUpIfFinal(turnId: string, job: Job, error: unknown): Promise<void> {
    if (error instanceof DelayedError) throw error;
    const permanent = isPermanentModelError(error);
    const lastAttempt = job.attemptsMade + 1 >= (job.opts.attempts ?? 1);
    logger.warn({ err: error, turnId, attempt: job.attemptsMade + 1, permanent }, 'turn step failed');
    if (!permanent && !lastAttempt) throw error;
    // The model endpoint refusing, or failing every attempt, is a `model_error`; anything else, `turn_failed`.
    const code = isModelError(error) ? 'model_error' : 'turn_failed';
    const message = permanent
      ? userMessageForModelError(error)
      : code === 'model_error'
        ? 'The model endpoint kept failing, so the assistant could not answer. Please try again later.'
        : TURN_GAVE_UP;
    if (await failTurn(db, turnId, code, message)) await outbox.flush(turnId);
  }
}
