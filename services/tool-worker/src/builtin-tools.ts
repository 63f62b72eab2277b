import {
  begin,
  commit,
  fail,
  getTool,
  isConnectionError,
  parseToolArgs,
  RefRegistry,
  Semaphore,
  stripUuids,
  ToolInputError,
  type Db,
  type DbClient,
  type OutboxEntry,
  type ToolName,
  type ToolResult,
} from '@assistant/shared';
import { toolHandlers, type ToolHandlers } from './handlers';
import type { Attempt, Refusal, ToolPlan } from './tool-plan';

/** A tool gets one retry (docs/tools.md#timeouts-and-retries), after a short pause well under any timeout. */
export const MAX_ATTEMPTS = 2;
const QUERY_CANCELED = '57014';

/** One call of a built-in tool, as a task of a turn (or a handler test) asks for it. */
export interface BuiltinCall {
  toolName: string;
  /** As the model sent them: null when they were not a JSON object. */
  arguments: Record<string, unknown> | null;
  userId: string;
  sessionId: string;
  /** The id a row created by the call gets, the same on every attempt. */
  entityId: string;
}

/** Where an attempt's outcome goes: the task rows and outbox of a turn, or a handler test. */
export interface CallRecorder {
  /**
   * Records the handler's result inside its transaction, as its last statements (the last may
   * carry the COMMIT, see commitWith); `afterCommit` holds what the handler asked to enqueue once
   * its writes commit. Answers what to publish then.
   */
  record(client: DbClient, result: ToolResult, afterCommit: OutboxEntry[]): Promise<OutboxEntry[]>;
  /** After the commit: publishes what record answered. */
  committed(owed: OutboxEntry[]): Promise<void>;
  /** The model's mistake the handler threw; its transaction was rolled back, so this records it on its own. */
  invalid(result: ToolResult): Promise<void>;
}

/**
 * Plans the calls of built-in tools: arguments checked by the tool's zod schema, then each
 * attempt in its own transaction under the tool's timeout (PostgreSQL's `statement_timeout`
 * included), a ToolInputError rolled back and answered, anything else left to a retry.
 */
export class BuiltinTools {
  /**
   * An attempt holds its transaction's connection and may take a second one for refs (written
   * outside the transaction on purpose). Letting at most half the pool's worth of attempts run
   * (the pool's size, DATABASE_POOL_SIZE; pg-pool always fills in `max`) means every
   * attempt can get its second connection, so a busy pool makes tools wait for their turn
   * (before their timeout starts) instead of holding each other up until they fail.
   */
  private readonly attempts: Semaphore;

  constructor(
    private readonly db: Db,
    private readonly defaultTimeoutMs: number,
    private readonly handlers: Partial<ToolHandlers> = toolHandlers,
  ) {
    this.attempts = new Semaphore(Math.max(1, Math.floor((db.options.max ?? 0) / 2)));
  }

  /** Its own timeout if the tool has one, and one retry; or the refusal of arguments that do not fit. */
  plan(call: BuiltinCall, recorder: CallRecorder): ToolPlan | Refusal {
    const { args, problem } = this.validate(call);
    if (problem) return { refusal: { result: problem, failure: 'invalid' } };
    const timeoutMs = getTool(call.toolName)?.timeoutMs ?? this.defaultTimeoutMs;
    return { maxAttempts: MAX_ATTEMPTS, timeoutMs, attempt: () => this.attempts.use(() => this.attempt(call, args, timeoutMs, recorder)) };
  }

  private validate(call: BuiltinCall): { args: Record<string, unknown>; problem?: ToolResult } {
    const spec = getTool(call.toolName);
    if (!spec) {
      return { args: {}, problem: fail(`There is no tool named ${call.toolName}.`, 'Call one of the tools you were given.') };
    }
    if (call.arguments === null) {
      return { args: {}, problem: fail('The arguments were not a valid JSON object.', 'Send the arguments as a JSON object.') };
    }
    const parsed = parseToolArgs(spec, call.arguments);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`);
      return {
        args: {},
        problem: fail(`Invalid arguments for ${call.toolName}: ${problems.join('; ')}.`, 'Fix these arguments and call the tool again.'),
      };
    }
    return { args: parsed.data };
  }

  private async attempt(call: BuiltinCall, args: Record<string, unknown>, timeoutMs: number, recorder: CallRecorder): Promise<Attempt> {
    const { db } = this;
    const handler = this.handlers[call.toolName as ToolName];
    if (!handler) throw new Error(`no handler for ${call.toolName}`);
    const controller = new AbortController();
    const afterCommit: OutboxEntry[] = [];
    const client = await db.connect();
    let discard = false;
    try {
      // The database gives up on a statement when the tool does, so nothing commits late. No
      // round trip of its own: a query without parameters may hold two statements, and it goes
      // out with the handler's first one.
      const begun = begin(client, `BEGIN; SET LOCAL statement_timeout = ${Math.ceil(timeoutMs)}`);
      const work = handler(args as never, {
        db: client,
        userId: call.userId,
        sessionId: call.sessionId,
        refs: new RefRegistry(db, call.sessionId, call.userId),
        entityId: call.entityId,
        signal: controller.signal,
        afterCommit: (entry) => afterCommit.push(entry),
      });
      const result = await raceDeadline(work, timeoutMs, controller);
      if (result === TIMED_OUT) {
        discard = true;
        return { kind: 'timeout' };
      }
      await begun;
      const owed = await recorder.record(client, result, afterCommit);
      await commit(client);
      await recorder.committed(owed);
      return { kind: 'done' };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        discard = true;
      });
      if (error instanceof ToolInputError) {
        await recorder.invalid(error.toResult());
        return { kind: 'done' };
      }
      // PostgreSQL's statement_timeout may cancel the statement a moment before our own deadline fires.
      if ((error as { code?: string }).code === QUERY_CANCELED) return { kind: 'timeout' };
      // Not the tool's failure: the job is retried with backoff, and the tool keeps its attempts.
      if (isConnectionError(error)) throw error;
      return { kind: 'error', message: stripUuids(error instanceof Error ? error.message : String(error)) };
    } finally {
      // A timed-out attempt's connection may still run its statement: destroy it, never reuse it.
      client.release(discard ? true : undefined);
    }
  }
}

const TIMED_OUT = Symbol('timed out');

/** The handler's result, or TIMED_OUT (after aborting the handler) when the deadline passes first. */
async function raceDeadline<T>(work: Promise<T>, ms: number, controller: AbortController): Promise<T | typeof TIMED_OUT> {
  let timer: NodeJS.Timeout | undefined;
  const deadline = new Promise<typeof TIMED_OUT>((resolve) => {
    timer = setTimeout(() => {
      controller.abort();
      resolve(TIMED_OUT);
    }, ms);
  });
  // The abandoned handler will fail once its connection is destroyed; that is expected.
  work.catch(() => undefined);
  try {
    return await Promise.race([work, deadline]);
  } finally {
    clearTimeout(timer);
  }
}
