import { setTimeout as sleep } from 'node:timers/promises';
import {
  appendOutbox,
  type ChannelAddress,
  DB_POOL_SIZE,
  fail,
  getTool,
  isConnectionError,
  isFinal,
  outboxEvent,
  outboxJob,
  RefRegistry,
  Semaphore,
  stripUuids,
  ToolInputError,
  withTransaction,
  type DbClient,
  type OutboxEntry,
  type Runtime,
  type ToolName,
  type ToolResult,
} from '@assistant/shared';
import { trackToolError } from './gotchas/track-error';
import { toolHandlers } from './handlers';
import type { ToolHandler } from './handlers';
import type { McpToolCaller } from './mcp/mcp-tool-caller';
import type { Attempt, Refusal, ToolPlan } from './tool-plan';

/** A tool gets one retry (docs/tools.md#timeouts-and-retries), after a short pause well under any timeout. */
export const MAX_ATTEMPTS = 2;
const RETRY_PAUSE_MS = 200;
const QUERY_CANCELED = '57014';

export interface ToolTask {
  id: string;
  ref: string;
  turn_id: string;
  call_id: string;
  tool_name: string;
  arguments: Record<string, unknown> | null;
  status: string;
  entity_id: string;
  user_id: string;
  session_id: string;
  session_key: string;
  turn_status: string;
  started_at: Date | null;
  origin: ChannelAddress | null;
}

/**
 * Runs one task: validation, then the handler under a timeout with one retry (an MCP tool gets
 * its plan from mcp/mcp-tool-caller.ts: the same loop, events and completion). The handler's
 * writes, the task's completion, the tool message for the model and the events to publish all
 * commit in one transaction, so a crash at any point leaves either nothing or everything, and a
 * re-run of a completed task only republishes what it owes.
 */
export class ToolRunner {
  /**
   * An attempt holds its transaction's connection and may take a second one for refs (written
   * outside the transaction on purpose). Letting at most half the pool's worth of attempts run
   * means every attempt can get its second connection, so a busy pool makes tools wait for
   * their turn (before their timeout starts) instead of holding each other up until they fail.
   */
  private readonly attempts = new Semaphore(Math.max(1, Math.floor(DB_POOL_SIZE / 2)));

  constructor(
    private readonly runtime: Runtime,
    private readonly mcp: McpToolCaller,
  ) {}

  async run(taskId: string): Promise<void> {
    const task = await this.load(taskId);
    if (!task || task.status !== 'in_progress' || isFinal(task.turn_status)) {
      if (task) await this.runtime.outbox.flush(task.turn_id);
      return;
    }
    const { events } = this.runtime;
    const args = JSON.parse(stripUuids(JSON.stringify(task.arguments ?? {}))) as Record<string, unknown>;
    await events.emitMany(task.turn_id, [
      { event: { type: 'task_update', task_id: task.ref, status: 'in_progress' }, dedupeKey: `${task.id}:in_progress` },
      { event: { type: 'tool_start', task_id: task.ref, tool_name: task.tool_name, arguments: args }, dedupeKey: `${task.id}:start` },
    ]);

    const plan = this.mcp.owns(task.tool_name)
      ? await this.mcp.plan(task, (result) => this.finish(task, result, null))
      : this.builtinPlan(task);
    if ('refusal' in plan) return this.finish(task, plan.refusal.result, plan.refusal.failure);
    const { maxAttempts, timeoutMs } = plan;
    let lastProblem = '';
    for (let attempt = 1; attempt <= maxAttempts; attempt++) {
      const outcome = await plan.attempt();
      if (outcome.kind === 'done') return;
      if (outcome.kind === 'timeout') {
        lastProblem = `timed out after ${timeoutMs / 1000} s`;
        await events.emit(
          task.turn_id,
          { type: 'tool_timeout', task_id: task.ref, tool_name: task.tool_name, timeout_seconds: timeoutMs / 1000 },
          `${task.id}:timeout:${attempt}`,
        );
      } else {
        lastProblem = outcome.message;
      }
      this.runtime.logger.warn(
        { turnId: task.turn_id, sessionKey: task.session_key, task: task.ref, tool: task.tool_name, attempt, problem: lastProblem },
        'tool attempt failed',
      );
      if (attempt < maxAttempts) {
        await events.emit(
          task.turn_id,
          {
            type: 'tool_retry',
            task_id: task.ref,
            tool_name: task.tool_name,
            attempt: attempt + 1,
            max_attempts: maxAttempts,
            reason: lastProblem,
          },
          `${task.id}:retry:${attempt + 1}`,
        );
        await sleep(RETRY_PAUSE_MS);
      }
    }
    await this.giveUp(task, lastProblem, maxAttempts);
  }

  /** Records a task as failed for good (after its retry, or when its job ran out of attempts). */
  async giveUp(task: ToolTask, problem: string, attempts = MAX_ATTEMPTS): Promise<void> {
    const error = `${task.tool_name} failed after ${attempts === 1 ? 'its only attempt' : `${attempts} attempts`}: ${problem}`;
    await this.finish(task, fail(error, 'Tell the user this did not work; do not claim it was done.'), 'error');
  }

  /** Records the task's result in a transaction of its own, then publishes what that owes. */
  private async finish(task: ToolTask, result: ToolResult, failure: 'invalid' | 'error' | 'unknown' | null): Promise<void> {
    const owed = await withTransaction(this.runtime.db, (client) => this.complete(client, task, result, failure));
    await this.runtime.outbox.publish(task.turn_id, task.origin, owed);
  }

  async load(taskId: string): Promise<ToolTask | undefined> {
    const found = await this.runtime.db.query<ToolTask>(
      `SELECT k.id, k.ref, k.turn_id, k.call_id, k.tool_name, k.arguments, k.status, k.entity_id, k.started_at,
              t.user_id, t.session_id, t.session_key, t.status AS turn_status, t.origin
       FROM tasks k JOIN turns t ON t.id = k.turn_id WHERE k.id = $1`,
      [taskId],
    );
    return found.rows[0];
  }

  /** A built-in tool: its zod schema, its own timeout if it has one, and one retry. */
  private builtinPlan(task: ToolTask): ToolPlan | Refusal {
    const { args, problem } = this.validate(task);
    if (problem) return { refusal: { result: problem, failure: 'invalid' } };
    const timeoutMs = getTool(task.tool_name)?.timeoutMs ?? this.runtime.config.TOOL_TIMEOUT_MS;
    return { maxAttempts: MAX_ATTEMPTS, timeoutMs, attempt: () => this.attempts.use(() => this.attempt(task, args, timeoutMs)) };
  }

  private validate(task: ToolTask): { args: Record<string, unknown>; problem?: ToolResult } {
    const spec = getTool(task.tool_name);
    if (!spec) {
      return { args: {}, problem: fail(`There is no tool named ${task.tool_name}.`, 'Call one of the tools you were given.') };
    }
    if (task.arguments === null) {
      return { args: {}, problem: fail('The arguments were not a valid JSON object.', 'Send the arguments as a JSON object.') };
    }
    const parsed = spec.input.safeParse(task.arguments);
    if (!parsed.success) {
      const problems = parsed.error.issues.map((issue) => `${issue.path.join('.') || 'arguments'}: ${issue.message}`);
      return {
        args: {},
        problem: fail(`Invalid arguments for ${task.tool_name}: ${problems.join('; ')}.`, 'Fix these arguments and call the tool again.'),
      };
    }
    return { args: parsed.data as Record<string, unknown> };
  }

  private async attempt(task: ToolTask, args: Record<string, unknown>, timeoutMs: number): Promise<Attempt> {
    const { db } = this.runtime;
    const handler = toolHandlers[task.tool_name as ToolName] as ToolHandler<ToolName>;
    const controller = new AbortController();
    const afterCommit: OutboxEntry[] = [];
    const client = await db.connect();
    let discard = false;
    try {
      await client.query('BEGIN');
      // The database gives up on a statement when the tool does, so nothing commits late.
      await client.query(`SET LOCAL statement_timeout = ${Math.ceil(timeoutMs)}`);
      const work = handler(args as never, {
        db: client,
        userId: task.user_id,
        sessionId: task.session_id,
        refs: new RefRegistry(db, task.session_id, task.user_id),
        entityId: task.entity_id,
        signal: controller.signal,
        afterCommit: (entry) => afterCommit.push(entry),
      });
      const result = await raceDeadline(work, timeoutMs, controller);
      if (result === TIMED_OUT) {
        discard = true;
        return { kind: 'timeout' };
      }
      const owed = await this.complete(client, task, result, null, afterCommit);
      await client.query('COMMIT');
      await this.runtime.outbox.publish(task.turn_id, task.origin, owed);
      return { kind: 'done' };
    } catch (error) {
      await client.query('ROLLBACK').catch(() => {
        discard = true;
      });
      if (error instanceof ToolInputError) {
        await this.finish(task, error.toResult(), 'invalid');
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

  /**
   * Finishes the task inside `client`'s transaction and queues its events and the next turn
   * step; answers what it queued (nothing when the task was already finished).
   */
  private async complete(
    client: DbClient,
    task: ToolTask,
    result: ToolResult,
    failure: 'invalid' | 'error' | 'unknown' | null,
    afterCommit: OutboxEntry[] = [],
  ): Promise<OutboxEntry[]> {
    const text = stripUuids(JSON.stringify(result));
    const failed = failure !== null || !result.success;
    const error = result.success ? undefined : stripUuids(String(result.error));
    const updated = await client.query<{ duration_ms: number }>(
      `UPDATE tasks SET status = $2, failure = $3, result = $4, error = $5, finished_at = NOW(),
         duration_ms = GREATEST(0, EXTRACT(EPOCH FROM (NOW() - COALESCE(started_at, NOW()))) * 1000)::int
       WHERE id = $1 AND status = 'in_progress' RETURNING duration_ms`,
      [task.id, failed ? 'failed' : 'completed', failed ? (failure ?? 'invalid') : null, text, error ?? null],
    );
    const durationMs = updated.rows[0]?.duration_ms;
    if (durationMs === undefined) return [];
    if (failed) await trackToolError(client, task.user_id, task.tool_name, error ?? 'failed');
    await client.query(
      `INSERT INTO messages (session_id, turn_id, role, content, tool_call_id) VALUES ($1, $2, 'tool', $3, $4)`,
      [task.session_id, task.turn_id, text, task.call_id],
    );
    const owed = [
      failure === 'error' || failure === 'unknown'
        ? outboxEvent({ type: 'tool_failed', task_id: task.ref, tool_name: task.tool_name, error: error ?? 'failed' })
        : outboxEvent({ type: 'tool_complete', task_id: task.ref, tool_name: task.tool_name, result: text }),
      outboxEvent({
        type: 'task_update',
        task_id: task.ref,
        status: failed ? 'failed' : 'completed',
        ...(error ? { error } : {}),
        duration_ms: durationMs,
      }),
      ...afterCommit,
      outboxJob('agent-turns', 'advance', { turnId: task.turn_id }),
    ];
    await appendOutbox(client, task.turn_id, owed);
    return owed;
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
