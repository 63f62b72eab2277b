import {
  committingLast,
  eventArguments,
  getTool,
  type ChannelAddress,
  isFinal,
  outboxEvent,
  outboxJob,
  outboxRemoval,
  outboxRemovalSet,
  nextTaskSql,
  storableText,
  stripUuids,
  trackToolError,
  withTransaction,
  type DbClient,
  type GotchaCause,
  type OutboxEntry,
  type OutboxEvent,
  type Runtime,
  type ToolResult,
} from '@assistant/shared';
import { BuiltinTools, MAX_ATTEMPTS, type BuiltinCall, type CallRecorder } from './builtin-tools';
import type { McpToolCaller } from './mcp/mcp-tool-caller';
import { givenUp, runAttempts, type GivenUp } from './tool-plan';

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
  origin: ChannelAddress | null;
  /** The step's task that would run next, as loaded: the hand-off checks it is still that one. */
  next_id: string | null;
  /** The task whose job runs this one (itself, or the first of the tools handed on to it). */
  job_task_id: string;
  /**
   * Published entries of the turn's outbox that this task's completion removes: those of the
   * task that handed on to it (its batch has no job to carry them, see OutboxPublisher.publish).
   */
  published?: string[];
  /** Its start events went out with the end of the task that handed on to it. */
  announced?: boolean;
}

/** What a task shares with the one it hands on to: its turn's, and its job. */
type TurnFields = 'turn_id' | 'user_id' | 'session_id' | 'session_key' | 'turn_status' | 'origin' | 'job_task_id';

/** What a task's completion committed: the entries to publish, and the step's task it handed on to. */
interface Completion {
  entries: OutboxEntry[];
  handed?: ToolTask;
}

/**
 * The job's running task and its turn, removing the published entries given (see ToolRunner.load).
 * The running task is stamped as starting now: its job may have waited in the queue since its
 * dispatch, and the stuck-turn sweep counts the tool's run from here.
 */
const LOAD_TASK = `WITH removed AS (${outboxRemoval('(SELECT turn_id FROM tasks WHERE id = $1)', '$2')}),
  begun AS (UPDATE tasks SET started_at = NOW()
    WHERE turn_id = (SELECT turn_id FROM tasks WHERE id = $1) AND (id = $1 OR run_by = $1) AND status = 'in_progress')
  SELECT k.id, k.ref, k.turn_id, k.call_id, k.tool_name, k.arguments, k.status, k.entity_id,
         t.user_id, t.session_id, t.session_key, t.status AS turn_status, t.origin,
         ${nextTaskSql('k.turn_id', 'k.iteration')} AS next_id, $1::uuid AS job_task_id
  FROM tasks k JOIN turns t ON t.id = k.turn_id
  WHERE k.turn_id = (SELECT turn_id FROM tasks WHERE id = $1) AND (k.id = $1 OR k.run_by = $1)
  ORDER BY k.status = 'in_progress' DESC, k.id = $1 DESC, k.position
  LIMIT 1`;

/** A task's completion and its hand-off (see ToolRunner.complete), built once: the text is the prepared statement's key. */
const COMPLETE_TASK = `WITH task AS (
    UPDATE tasks SET status = $2, failure = $3, result = $4, error = $5, finished_at = NOW(),
      duration_ms = GREATEST(0, EXTRACT(EPOCH FROM (NOW() - COALESCE(started_at, NOW()))) * 1000)::int
    WHERE id = $1 AND status = 'in_progress' RETURNING duration_ms, iteration),
  message AS (
    INSERT INTO messages (session_id, turn_id, role, content, tool_call_id) SELECT $6, $7, 'tool', $4, $8 FROM task),
  turn AS (
    SELECT id FROM turns
    WHERE id = $7 AND status = 'running' AND claim IS NULL AND $9::uuid IS NOT NULL AND EXISTS (SELECT 1 FROM task)
    FOR NO KEY UPDATE),
  next AS (
    UPDATE tasks SET status = 'in_progress', started_at = NOW(), run_by = $11
    WHERE status IN ('approved', 'pending') AND id = $9 AND EXISTS (SELECT 1 FROM turn)
      AND id = ${nextTaskSql('$7', '(SELECT iteration FROM task)')}
    RETURNING id, ref, call_id, tool_name, arguments, status, entity_id, iteration),
  owed AS (
    SELECT jsonb_set($10::jsonb, '{1,event,duration_ms}', to_jsonb(task.duration_ms))
      || CASE WHEN EXISTS (SELECT 1 FROM next) THEN '[]'::jsonb ELSE $12::jsonb END AS entries
    FROM task),
  appended AS (UPDATE turns SET ${outboxRemovalSet('$13', 'owed.entries')} FROM owed WHERE turns.id = $7)
  SELECT entries,
    (SELECT json_build_object('id', id, 'ref', ref, 'call_id', call_id, 'tool_name', tool_name, 'arguments', arguments,
              'status', status, 'entity_id', entity_id, 'next_id', ${nextTaskSql('$7', 'next.iteration', 'next.id')})
     FROM next) AS handed
  FROM owed`;

/**
 * Runs one task: validation, then the handler under a timeout with one retry (an MCP tool gets
 * its plan from mcp/mcp-tool-caller.ts: the same loop, events and completion). The handler's
 * writes, the task's completion, the tool message for the model and the events to publish all
 * commit in one transaction, so a crash at any point leaves either nothing or everything, and a
 * re-run of a completed task only republishes what it owes.
 */
export class ToolRunner {
  private readonly builtins: BuiltinTools;

  constructor(
    private readonly runtime: Runtime,
    private readonly mcp: McpToolCaller,
  ) {
    this.builtins = new BuiltinTools(runtime.db, runtime.config.TOOL_TIMEOUT_MS);
  }

  /**
   * Runs the job's task, then each task a finished one handed on to. A re-run (a retry, or the
   * job taken up after a crash) starts from whichever of them is still running; when none is,
   * it only republishes what the turn's outbox holds. `published`: the batch that queued the job,
   * which the first load removes.
   */
  async run(jobTaskId: string, published: string[] = []): Promise<void> {
    const task = await this.load(jobTaskId, published);
    if (!task) return;
    // A task started before its turn was cancelled still runs: its end sends the turn's `done`.
    const stopped = isFinal(task.turn_status) && task.turn_status !== 'cancelled';
    if (task.status !== 'in_progress' || stopped) return this.runtime.outbox.flush(task.turn_id);
    let next: ToolTask | undefined = task;
    while (next) next = await this.runTask(next);
  }

  /** Answers the step's task it handed on to, started and to run next in this job. */
  private async runTask(task: ToolTask): Promise<ToolTask | undefined> {
    const { events } = this.runtime;
    if (!task.announced) {
      await events.emitMany(
        task.turn_id,
        taskStartEvents(task).map((entry) => ({ event: entry.event, dedupeKey: entry.key })),
      );
    }

    let handed: ToolTask | undefined;
    const plan = this.mcp.owns(task.tool_name)
      ? await this.mcp.plan(task, async (result) => {
          handed = await this.finish(task, result, null);
        })
      : this.builtins.plan(
          builtinCall(task),
          this.recorder(task, (next) => (handed = next)),
        );
    if ('refusal' in plan) return this.finish(task, plan.refusal.result, plan.refusal.failure);
    const problem = await runAttempts(plan, {
      failed: async (attempt, outcome, reason) => {
        if (outcome.kind === 'timeout') {
          await events.emit(
            task.turn_id,
            { type: 'tool_timeout', task_id: task.ref, tool_name: task.tool_name, timeout_seconds: plan.timeoutMs / 1000 },
            `${task.id}:timeout:${attempt}`,
          );
        }
        this.runtime.logger.warn(
          { turnId: task.turn_id, sessionKey: task.session_key, task: task.ref, tool: task.tool_name, attempt, problem: reason },
          'tool attempt failed',
        );
      },
      retrying: (attempt, reason) =>
        events.emit(
          task.turn_id,
          { type: 'tool_retry', task_id: task.ref, tool_name: task.tool_name, attempt, max_attempts: plan.maxAttempts, reason },
          `${task.id}:retry:${attempt}`,
        ),
    });
    return problem === undefined ? handed : this.giveUp(task, problem, plan.maxAttempts);
  }

  /**
   * Records a task as failed for good: after its attempts, or when its job ran out of attempts
   * (a `problem` of the tool worker's own, which says nothing of the tool and counts toward no gotcha).
   */
  async giveUp(task: ToolTask, problem: GivenUp | string, attempts = MAX_ATTEMPTS): Promise<undefined> {
    const given = typeof problem === 'string' ? { problem, cause: null } : problem;
    await this.finish(task, givenUp(task.tool_name, given.problem, attempts), 'error', given.cause);
    return undefined;
  }

  /**
   * Records the task's result in a transaction of its own, then publishes what that owes;
   * answers the task it handed on to.
   */
  private async finish(
    task: ToolTask,
    result: ToolResult,
    failure: 'invalid' | 'error' | 'unknown' | null,
    cause?: GotchaCause | null,
  ): Promise<ToolTask | undefined> {
    const completion = await withTransaction(this.runtime.db, (client) => this.complete(client, task, result, failure, [], cause));
    return this.publish(task, completion);
  }

  /**
   * Publishes what a task's completion owes. When it handed on to the step's next task, no job
   * carries its removal: the next task's completion removes it (`published`).
   */
  private async publish(task: ToolTask, { entries, handed }: Completion): Promise<ToolTask | undefined> {
    // Without a hand-off the batch holds the `advance`, which carries its removal: nothing is left.
    // With one, the next task's start goes out with this one's end (those events are not in the
    // outbox: only the completion's entries are left for the next task's completion to remove).
    const started = handed ? taskStartEvents(handed) : [];
    const left = await this.runtime.outbox.publish(task.turn_id, task.origin, [...entries, ...started], 'caller');
    return handed && { ...handed, published: left.filter((key) => !started.some((event) => event.key === key)), announced: true };
  }

  /**
   * The job's running task (its own, or one handed on within it), else its own task. The same
   * statement removes the `published` entries from the turn's outbox.
   */
  async load(jobTaskId: string, published: string[] = []): Promise<ToolTask | undefined> {
    const found = await this.runtime.db.query<ToolTask>(LOAD_TASK, [jobTaskId, published]);
    return found.rows[0];
  }

  /** A built-in tool's attempt completes the task in its own transaction and publishes once that commits. */
  private recorder(task: ToolTask, handOn: (next: ToolTask | undefined) => void): CallRecorder {
    let handed: ToolTask | undefined;
    return {
      record: async (client, result, afterCommit) => {
        const completion = await this.complete(client, task, result, null, afterCommit);
        handed = completion.handed;
        return completion.entries;
      },
      committed: async (entries) => handOn(await this.publish(task, { entries, handed })),
      invalid: async (result) => handOn(await this.finish(task, result, 'invalid')),
    };
  }

  /**
   * Finishes the task inside `client`'s transaction and queues its events and what comes next
   * (the step's next tool, or the turn's next step); answers what it queued (nothing when the
   * task was already finished). It is the transaction's end: a success commits it here, and the
   * caller's commit() sends no second COMMIT.
   *
   * A failure counts toward the tool's gotchas (docs/memory.md#gotchas) with its `cause`: by
   * default the call's own problem, except an outcome unknown after a crash (`unknown`), which
   * says nothing of the tool; `null` counts nothing. A tool that does not exist is in play
   * nowhere, so it is not counted either.
   */
  private async complete(
    client: DbClient,
    task: ToolTask,
    result: ToolResult,
    failure: 'invalid' | 'error' | 'unknown' | null,
    afterCommit: OutboxEntry[] = [],
    cause: GotchaCause | null = failure === 'unknown' ? null : 'arguments',
  ): Promise<Completion> {
    const text = stripUuids(JSON.stringify(result));
    const failed = failure !== null || !result.success;
    // A failure's text goes into JSONB events and a text column as it is: an MCP server's may hold a NUL.
    const error = result.success ? undefined : storableText(stripUuids(String(result.error)));
    const done =
      failure === 'error' || failure === 'unknown'
        ? outboxEvent({ type: 'tool_failed', task_id: task.ref, tool_name: task.tool_name, error: error ?? 'failed' })
        : outboxEvent({ type: 'tool_complete', task_id: task.ref, tool_name: task.tool_name, result: text });
    // Its duration is the database's (finished_at − started_at), set by the statement below.
    const update = outboxEvent({
      type: 'task_update',
      task_id: task.ref,
      status: failed ? 'failed' : 'completed',
      ...(error ? { error } : {}),
      duration_ms: 0,
    });
    // A failure may need the agent (asking the user whether to go on); a success hands on to the step's next tool.
    const handOff = failed ? null : task.next_id;
    // In one statement: the task's result, the tool message for the model, the hand-off and the
    // outbox. The hand-off marks started the task decide() would dispatch (approved or pending, in
    // the model's order) if it is still the one loaded with this task, to run next in this job
    // (`run_by`) instead of an `advance`, so the turn goes from tool to tool without a trip
    // through the agent or the queue; when the agent must decide (no such task, another one came
    // first, or the turn stopped running), the `advance` goes instead. The turn row is locked
    // before the next task, the order a cancel takes them in. Nothing happens when the task was
    // already finished. The task handed on to comes back to run next without a read of its own,
    // and the same write of the turn row removes the entries published before this task
    // (`published`).
    // A success's statement is its transaction's last, so COMMIT goes out with it; a failure is
    // counted after it, in the same transaction.
    const completed = await committingLast(client, !failed).query<{ entries: OutboxEntry[]; handed: Omit<ToolTask, TurnFields> | null }>(
      COMPLETE_TASK,
      [
        task.id,
        failed ? 'failed' : 'completed',
        failed ? (failure ?? 'invalid') : null,
        text,
        error ?? null,
        task.session_id,
        task.turn_id,
        task.call_id,
        handOff,
        // The task_update second: the statement sets its duration there.
        JSON.stringify([done, update, ...afterCommit]),
        task.job_task_id,
        JSON.stringify([outboxJob('agent-turns', 'advance', { turnId: task.turn_id })]),
        task.published ?? [],
      ],
    );
    const row = completed.rows[0];
    if (!row) return { entries: [] };
    const exists = getTool(task.tool_name) !== undefined || this.mcp.owns(task.tool_name);
    if (failed && cause && exists) await trackToolError(client, task.user_id, task.tool_name, error ?? 'failed', cause);
    const { turn_id, user_id, session_id, session_key, turn_status, origin, job_task_id } = task;
    const turn: Pick<ToolTask, TurnFields> = { turn_id, user_id, session_id, session_key, turn_status, origin, job_task_id };
    return { entries: row.entries, ...(row.handed ? { handed: { ...row.handed, ...turn } } : {}) };
  }
}

function builtinCall(task: ToolTask): BuiltinCall {
  return {
    toolName: task.tool_name,
    arguments: task.arguments,
    userId: task.user_id,
    sessionId: task.session_id,
    entityId: task.entity_id,
  };
}

/**
 * A task's `task_update` (in progress) and `tool_start`, sent as it starts to run, keyed by the
 * task: a run again after a crash sends them again, and they show once.
 */
function taskStartEvents(task: ToolTask): OutboxEvent[] {
  const args = eventArguments(task.arguments);
  return [
    outboxEvent({ type: 'task_update', task_id: task.ref, status: 'in_progress' }, `${task.id}:in_progress`),
    outboxEvent({ type: 'tool_start', task_id: task.ref, tool_name: task.tool_name, arguments: args }, `${task.id}:start`),
  ];
}
