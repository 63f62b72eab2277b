import {
  ACTIVE_STATUSES,
  describeCall,
  finishEntries,
  jobId,
  outboxEvent,
  outboxJob,
  recordModelUsage,
  sessionIdleDigestJob,
  stripUuids,
  withTransaction,
  type Db,
  type DbClient,
  type McpToolEntry,
  type ModelUsage,
  type OutboxEntry,
  type OutboxPublisher,
} from '@assistant/shared';
import { hasFreeSlot, headOfLane, insertUserMessages } from './lane-admission';
import type { TaskRow, TurnState } from './turn-state';
import { recordUnrunTask } from './unrun-tasks';
import type { ScreenedCall } from './untrusted-output';

/**
 * The agent's own transitions of a turn. Each commits at once, guarded by the turn's `version`
 * (or, for a model call, by the claim): when another transition got there first it changes
 * nothing and answers false, and the caller re-reads the state and decides again. The turn row
 * is written once per transition, with the outbox entries it owes, which are then published
 * from memory (leftovers of a crash are published by the next job that reads the turn).
 */
export class TurnTransitions {
  constructor(
    private readonly db: Db,
    private readonly outbox: OutboxPublisher,
    private readonly approvalTtlSeconds: number,
    private readonly sessionIdleSeconds: number,
    private readonly maxToolCallsPerStep: number,
    private readonly maxActiveTurnsPerUser: number,
  ) {}

  /** Starts the session's oldest queued turn, unless one of its turns is already active. */
  async activateNext(sessionId: string): Promise<string | undefined> {
    const started = await withTransaction(this.db, async (client) => {
      // Serialises lane changes of one session across every worker copy.
      await client.query('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [sessionId]);
      const active = await client.query('SELECT 1 FROM turns WHERE session_id = $1 AND status = ANY($2) LIMIT 1', [
        sessionId,
        ACTIVE_STATUSES,
      ]);
      if (active.rowCount !== 0) return undefined;
      const turn = await headOfLane(client, sessionId);
      if (!turn?.due || !(await hasFreeSlot(client, turn.user_id, this.maxActiveTurnsPerUser))) return undefined;
      const entries = [
        outboxEvent({ type: 'turn_started', session_key: turn.session_key }),
        outboxJob('agent-turns', 'advance', { turnId: turn.id }),
        sessionIdleDigestJob(sessionId, turn.id, this.sessionIdleSeconds),
      ];
      // The preferences in force when the turn starts apply to the whole turn.
      await client.query(
        `UPDATE turns t SET status = 'running', started_at = NOW(), version = version + 1, outbox = t.outbox || $2::jsonb,
           max_iterations = p.max_iterations, autonomous = p.autonomous_mode, model = p.default_model
         FROM user_preferences p WHERE t.id = $1 AND p.user_id = t.user_id`,
        [turn.id, JSON.stringify(entries)],
      );
      await insertUserMessages(client, sessionId, turn);
      await client.query('UPDATE sessions SET last_activity_at = NOW() WHERE id = $1', [sessionId]);
      return { turn, entries };
    });
    if (!started) return undefined;
    await this.outbox.publish(started.turn.id, started.turn.origin, started.entries);
    return started.turn.id;
  }

  /** Marks the task started and queues its tool job, in one statement. */
  async dispatch(state: TurnState, task: TaskRow): Promise<boolean> {
    const entries = [outboxJob('tool-calls', 'run-tool', { taskId: task.id, turnId: state.turn.id }, { jobId: jobId('task', task.id) })];
    const updated = await this.db.query(
      `WITH turn AS (
         UPDATE turns SET version = version + 1, outbox = outbox || $4::jsonb
         WHERE id = $1 AND version = $2 AND status = 'running' AND claim IS NULL RETURNING id)
       UPDATE tasks SET status = 'in_progress', started_at = NOW() WHERE id = $3 AND EXISTS (SELECT 1 FROM turn)`,
      [state.turn.id, state.turn.version, task.id, JSON.stringify(entries)],
    );
    if (updated.rowCount !== 1) return false;
    await this.outbox.publish(state.turn.id, state.turn.origin, entries);
    return true;
  }

  async awaitApproval(state: TurnState): Promise<boolean> {
    return this.guarded(state, [], 'awaiting_approval');
  }

  async askUser(state: TurnState, remaining: TaskRow[]): Promise<boolean> {
    const failed = state.tasks.filter((task) => task.failure === 'error' && !task.asked).map((task) => task.ref);
    const question = outboxEvent({
      type: 'ask_user_continue',
      question: `${failed.join(', ')} failed even after a retry. Continue with the remaining tasks?`,
      remaining_tasks: remaining.map((task) => task.ref),
    });
    return this.guarded(state, [question], 'awaiting_user');
  }

  /** Takes ownership of the next model call for this job (see decide()). */
  async claim(state: TurnState, jobIdentity: string): Promise<boolean> {
    const claimed = await this.db.query(
      `UPDATE turns SET claim = $3, version = version + 1 WHERE id = $1 AND version = $2 AND status = 'running' AND claim IS NULL`,
      [state.turn.id, state.turn.version, jobIdentity],
    );
    return claimed.rowCount === 1;
  }

  /** Records the tool calls the model planned as tasks (and approvals in manual mode). */
  async planTasks(
    state: TurnState,
    claim: string,
    content: string,
    calls: ScreenedCall[],
    mcpTools: readonly McpToolEntry[] = [],
    usage?: ModelUsage,
  ): Promise<boolean> {
    const { turn } = state;
    return this.claimed(state, claim, { iterations: 1 }, async (client) => {
      await recordModelUsage(client, turn, usage);
      const iteration = turn.iterations + 1;
      await client.query(
        `INSERT INTO messages (session_id, turn_id, role, content, tool_calls) VALUES ($1, $2, 'assistant', $3, $4)`,
        // Only what goes back to the model: the screen's parsed copy of the arguments would double the row.
        [turn.session_id, turn.id, content, JSON.stringify(calls.map(({ id, name, arguments: text }) => ({ id, name, arguments: text })))],
      );
      const last = await client.query<{ max: number | null }>('SELECT MAX(position) AS max FROM tasks WHERE turn_id = $1', [
        turn.id,
      ]);
      let position = last.rows[0]?.max ?? 0;
      const entries: OutboxEntry[] = [];
      const planned: { id: string; description: string; tool_name: string }[] = [];
      for (const call of calls) {
        position += 1;
        const args = call.args;
        if (!args) {
          entries.push(...(await recordUnrunTask(client, turn, { call, iteration, position, maxCalls: this.maxToolCallsPerStep })));
          planned.push({ id: `task_${position}`, description: `Call ${call.name}`, tool_name: call.name });
          continue;
        }
        const { description, mutates } = describeCall(call.name, args, mcpTools);
        const needsApproval = mutates && !turn.autonomous;
        const ref = `task_${position}`;
        const inserted = await client.query<{ id: string }>(
          `INSERT INTO tasks (turn_id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status)
           VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10) RETURNING id`,
          [turn.id, ref, position, iteration, call.id, call.name, JSON.stringify(args), description, mutates,
            needsApproval ? 'awaiting_approval' : 'pending'],
        );
        planned.push({ id: ref, description, tool_name: call.name });
        if (needsApproval) {
          const approval = await client.query<{ id: string }>(
            `INSERT INTO approvals (user_id, turn_id, task_id, expires_at)
             VALUES ($1, $2, $3, NOW() + make_interval(secs => $4)) RETURNING id`,
            [turn.user_id, turn.id, inserted.rows[0]?.id, this.approvalTtlSeconds],
          );
          const approvalId = approval.rows[0]?.id as string;
          entries.push(
            outboxEvent({
              type: 'tool_approval_request',
              approval_id: approvalId,
              task_id: ref,
              tool_name: call.name,
              arguments: eventArguments(args),
            }),
            outboxJob('agent-turns', 'expire-approval', { approvalId }, {
              jobId: jobId('expire', approvalId),
              delayMs: this.approvalTtlSeconds * 1_000,
            }),
          );
        }
      }
      if (planned.length >= 2) {
        entries.unshift(
          outboxEvent({ type: 'task_list', tasks: planned.map((task) => ({ ...task, status: 'pending' as const })) }),
        );
      }
      return entries;
    });
  }

  /** Ends the turn with the model's answer (or an explanation written for the user). */
  async answer(
    state: TurnState,
    claim: string,
    content: string,
    status: 'completed' | 'limit_reached',
    options: { countIteration: boolean; iterationLimit?: number; usage?: ModelUsage | undefined },
  ): Promise<boolean> {
    const { turn } = state;
    return this.claimed(state, claim, { iterations: options.countIteration ? 1 : 0, status }, async (client) => {
      // The step's usage commits with its outcome: a step retried after a crash is counted once.
      await recordModelUsage(client, turn, options.usage);
      await client.query(`INSERT INTO messages (session_id, turn_id, role, content) VALUES ($1, $2, 'assistant', $3)`, [
        turn.session_id,
        turn.id,
        content,
      ]);
      return [
        outboxEvent({ type: 'message', role: 'assistant', content }),
        ...(options.iterationLimit !== undefined
          ? [outboxEvent({ type: 'iteration_limit', max_iterations: options.iterationLimit })]
          : []),
        ...finishEntries(turn.id, turn.session_id, status),
      ];
    });
  }

  /** Tool calls of the whole turn so far, oldest first, as `name + arguments` signatures. */
  async recentCallSignatures(turnId: string, count: number): Promise<string[]> {
    const found = await this.db.query<{ tool_name: string; arguments: unknown }>(
      'SELECT tool_name, arguments FROM tasks WHERE turn_id = $1 ORDER BY position DESC LIMIT $2',
      [turnId, count],
    );
    return found.rows.reverse().map((row) => callSignature(row.tool_name, row.arguments));
  }

  /** Parks the turn (waiting for an approval or an answer) in one statement. */
  private async guarded(state: TurnState, entries: OutboxEntry[], status: 'awaiting_approval' | 'awaiting_user'): Promise<boolean> {
    const owed = [...entries, parkedEntry(state)];
    const updated = await this.db.query(
      `UPDATE turns SET version = version + 1, status = $3, outbox = outbox || $4::jsonb
       WHERE id = $1 AND version = $2 AND status = 'running' AND claim IS NULL`,
      [state.turn.id, state.turn.version, status, JSON.stringify(owed)],
    );
    if (updated.rowCount !== 1) return false;
    await this.outbox.publish(state.turn.id, state.turn.origin, owed);
    return true;
  }

  /**
   * Records a model step's outcome: `change` writes its rows, then one update of the turn
   * releases the claim and queues the entries; a claim lost meanwhile rolls all of it back.
   */
  private async claimed(
    state: TurnState,
    claim: string,
    turnChange: { iterations: number; status?: 'completed' | 'limit_reached' },
    change: (client: DbClient) => Promise<OutboxEntry[]>,
  ): Promise<boolean> {
    const { turn } = state;
    const entries = await withTransaction(this.db, async (client) => {
      const owed = await change(client);
      const updated = await client.query(
        `UPDATE turns SET claim = NULL, version = version + 1, outbox = outbox || $3::jsonb, iterations = iterations + $4,
           status = COALESCE($5, status), finished_at = CASE WHEN $5::text IS NULL THEN finished_at ELSE NOW() END
         WHERE id = $1 AND claim = $2 AND status = 'running'`,
        [turn.id, claim, JSON.stringify(owed), turnChange.iterations, turnChange.status ?? null],
      );
      if (updated.rowCount !== 1) throw new ClaimLost();
      return owed;
    }).catch((error: unknown) => {
      if (error instanceof ClaimLost) return undefined;
      throw error;
    });
    if (!entries) return false;
    await this.outbox.publish(turn.id, turn.origin, entries);
    return true;
  }
}

/** Rolls back a model step whose claim another job took meanwhile. */
class ClaimLost extends Error {}

/** A turn that parks (waiting for an approval or an answer) frees a slot: the user's other lanes may start. */
function parkedEntry(state: TurnState): OutboxEntry {
  return outboxJob('agent-turns', 'lane', { sessionId: state.turn.session_id }, {
    jobId: jobId('park', `${state.turn.id}.${state.turn.version}`),
  });
}

/** Arguments as events show them: refs and names as the model gave them, never a UUID. */
export function eventArguments(args: Record<string, unknown> | null | undefined): Record<string, unknown> {
  return JSON.parse(stripUuids(JSON.stringify(args ?? {}))) as Record<string, unknown>;
}

export function callSignature(name: string, args: unknown): string {
  return `${name} ${JSON.stringify(sortKeys(args ?? {}))}`;
}

function sortKeys(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(sortKeys);
  if (value !== null && typeof value === 'object') {
    return Object.fromEntries(
      Object.entries(value as Record<string, unknown>)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([k, v]) => [k, sortKeys(v)]),
    );
  }
  return value;
}
