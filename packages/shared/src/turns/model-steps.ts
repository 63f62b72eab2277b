import { randomUUID } from 'node:crypto';
import { committingLast, UNFLUSHED_COMMIT, withTransaction, type Queryable } from '../db';
import { normalizeToolError } from '../gotchas/normalize-error';
import { trackToolError } from '../gotchas/track-error';
import type { McpToolEntry } from '../mcp/mcp-catalog';
import { describeCall } from '../tools/tool-directory';
import type { ModelUsage } from '../usage/usage-store';
import { approvalEntries } from './approvals';
import { runToolJob } from './dispatch';
import { laneAfter, lockLanes } from './finishing';
import { outboxEvent, type OutboxEntry } from './outbox';
import { recordStepRows, type NewTask, type StepMessage } from './step-rows';
import type { TurnMachine } from './turn-machine';
import type { PlannedCall, TurnRow, TurnState } from './turn-state';
import { unrunTask } from './unrun-tasks';

/**
 * The iteration limit: the step that would reach the turn's `max_iterations` is its last. The
 * model gets no tools for it, so it must answer, and the turn ends `limit_reached` (docs/agent.md).
 */
export function isLastIteration(turn: Pick<TurnRow, 'iterations' | 'max_iterations'>): boolean {
  return turn.iterations + 1 >= turn.max_iterations;
}

/** A model call this job owns, and the position its step's tasks number on from. */
export interface ClaimedCall {
  claim: string;
  lastPosition: number;
}

/**
 * Takes ownership of the next model call for this job (see decide() in the agent), or keeps it
 * when this job already holds it (its retry after a crash). Answers the turn's last task
 * position too: only the claim's holder adds tasks, so it stays true until the step is stored.
 */
export async function claimModelCall(db: Queryable, state: TurnState, jobIdentity: string): Promise<ClaimedCall | undefined> {
  // Unflushed: the step's rows are stored only while the claim holds, in a statement that is
  // flushed; a claim lost in a database crash is made again by the job's next run.
  const claimed = await db.query<{ last_position: number }>(
    `UPDATE turns SET claim = $3, version = version + 1
     WHERE id = $1 AND status = 'running' AND (claim = $3 OR (claim IS NULL AND version = $2)) AND ${UNFLUSHED_COMMIT}
     RETURNING (SELECT COALESCE(MAX(position), 0) FROM tasks WHERE turn_id = $1)::int AS last_position`,
    [state.turn.id, state.turn.version, jobIdentity],
  );
  const row = claimed.rows[0];
  return row ? { claim: jobIdentity, lastPosition: row.last_position } : undefined;
}

/**
 * Records the tool calls the model planned as tasks (and approvals in manual mode). The first
 * task that may run at once is sent to the tool worker in the same statement, as dispatch()
 * would send it: answers 'dispatched' then, since the turn waits for that tool. Like every step,
 * false when another job took the claim meanwhile.
 */
export async function planTasks(
  m: TurnMachine,
  state: TurnState,
  claimed: ClaimedCall,
  step: {
    content: string;
    calls: PlannedCall[];
    mcpTools?: readonly McpToolEntry[];
    /** The user's zone: a task's line shows times in it. */
    timeZone: string;
    usage?: ModelUsage | undefined;
    /** Events the step wrote before its own (its streamed text), still being written: see answer(). */
    earlierEvents?: () => Promise<void>;
  },
): Promise<boolean | 'dispatched'> {
  const { turn } = state;
  const iteration = turn.iterations + 1;
  // Only what goes back to the model: the screen's parsed copy of the arguments would double the row.
  const toolCalls = step.calls.map(({ id, name, arguments: text }) => ({ id, name, arguments: text }));
  const messages: StepMessage[] = [{ role: 'assistant', content: step.content, tool_calls: toolCalls }];
  const tasks: NewTask[] = [];
  const approvals: { id: string; task_id: string }[] = [];
  const entries: OutboxEntry[] = [];
  /** Refused calls of tools that exist: the model's mistakes, counted as the tool worker counts those it refuses. */
  const mistakes: { tool: string; error: string }[] = [];
  let dispatched = false;
  for (const [index, call] of step.calls.entries()) {
    const position = claimed.lastPosition + index + 1;
    const id = randomUUID();
    const args = call.args;
    if (!args) {
      const unrun = unrunTask({ id, call, iteration, position, callNumber: index + 1, maxCalls: m.maxToolCallsPerStep });
      tasks.push(unrun.row);
      messages.push(unrun.message);
      entries.push(...unrun.entries);
      if (call.mistake) mistakes.push({ tool: call.name, error: call.mistake });
      continue;
    }
    const { description, mutates } = describeCall(call.name, args, step.mcpTools ?? [], { timeZone: step.timeZone });
    const needsApproval = mutates && !turn.autonomous;
    const runsNow = !needsApproval && !dispatched;
    const ref = `task_${position}`;
    tasks.push({
      id,
      ref,
      position,
      iteration,
      call_id: call.id,
      tool_name: call.name,
      arguments: args,
      description,
      mutates,
      status: needsApproval ? 'awaiting_approval' : runsNow ? 'in_progress' : 'pending',
    });
    if (runsNow) {
      dispatched = true;
      entries.push(runToolJob(turn.id, id));
    }
    if (needsApproval) {
      const approval = { id: randomUUID(), task_id: id };
      approvals.push(approval);
      entries.push(...approvalEntries(m, approval.id, { ref, name: call.name, args }));
    }
  }
  if (tasks.length >= 2) {
    const planned = tasks.map((task) => ({
      id: task.ref,
      description: task.description,
      tool_name: task.tool_name,
      status: 'pending' as const,
    }));
    entries.unshift(outboxEvent({ type: 'task_list', tasks: planned }));
  }
  const record = (db: Queryable) =>
    recordStepRows(db, turn, {
      claim: claimed.claim,
      usage: step.usage,
      iterations: 1,
      messages,
      tasks,
      approvals,
      approvalTtlSeconds: m.approvalTtlSeconds,
      entries,
    });
  // A mistake is counted in the transaction that records its task, and only if it was recorded:
  // the job run again finds the claim gone, so nothing counts twice (docs/memory.md#gotchas).
  const { recorded } =
    mistakes.length === 0
      ? await record(m.db)
      : await withTransaction(m.db, async (client) => {
          const rows = await record(client);
          // In one order of their rows (tool, then pattern): two steps of the user counting the same
          // mistakes at once then wait for each other instead of deadlocking.
          const ordered = mistakes
            .map((mistake) => ({ ...mistake, key: `${mistake.tool}\u0000${normalizeToolError(mistake.error)}` }))
            .sort((a, b) => (a.key < b.key ? -1 : a.key > b.key ? 1 : 0));
          if (rows.recorded) for (const { tool, error } of ordered) await trackToolError(client, turn.user_id, tool, error);
          return rows;
        });
  if (!recorded) return false;
  await step.earlierEvents?.();
  await m.outbox.publish(turn.id, turn.origin, entries);
  return dispatched ? 'dispatched' : true;
}

/**
 * Ends the turn with the model's answer (or an explanation written for the user). The lane
 * locks come first, in a statement of their own, so the step's statement sees every turn queued
 * before them: the next turn's lane job is queued only when one of the user's turns waits for it.
 */
export async function answer(
  m: TurnMachine,
  state: TurnState,
  claim: string,
  content: string,
  status: 'completed' | 'limit_reached',
  options: {
    countIteration: boolean;
    iterationLimit?: number;
    usage?: ModelUsage | undefined;
    /**
     * Events the step wrote before its own (its streamed text), still being written: the step's
     * rows are stored meanwhile, and its events are published once those are written.
     */
    earlierEvents?: () => Promise<void>;
  },
): Promise<boolean> {
  const { turn } = state;
  const entries = [
    outboxEvent({ type: 'message', role: 'assistant', content }),
    ...(options.iterationLimit !== undefined ? [outboxEvent({ type: 'iteration_limit', max_iterations: options.iterationLimit })] : []),
    outboxEvent({ type: 'done', status }),
  ];
  const lane = laneAfter(turn.id, turn.session_id);
  const { recorded, queued } = await withTransaction(m.db, async (client) => {
    // The locks, the step's statement and the COMMIT go out together: PostgreSQL still runs them
    // one after the other, so the statement's snapshot is taken once the locks are held.
    const [, rows] = await Promise.all([
      lockLanes(client, turn),
      recordStepRows(committingLast(client), turn, {
        claim,
        usage: options.usage,
        iterations: options.countIteration ? 1 : 0,
        status,
        messages: [{ role: 'assistant', content }],
        entries,
        ifQueued: [lane],
      }),
    ]);
    return rows;
  });
  if (!recorded) return false;
  await options.earlierEvents?.();
  await m.outbox.publish(turn.id, turn.origin, queued ? [...entries, lane] : entries);
  return true;
}
