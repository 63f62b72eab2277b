import {
  ACTIVE_STATUSES,
  appendOutbox,
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
} from '@assistant/shared';
import { hasFreeSlot, headOfLane, insertUserMessages } from './lane-admission';
import type { TaskRow, TurnState } from './turn-state';
import { recordUnrunTask } from './unrun-tasks';
import type { ScreenedCall } from './untrusted-output';

/**
 * The agent's own transitions of a turn. Each runs in one transaction guarded by the turn's
 * `version` (or, for a model call, by the claim): when another transition got there first it
 * changes nothing and answers false, and the caller re-reads the state and decides again.
 */
export class TurnTransitions {
  constructor(
    private readonly db: Db,
    private readonly approvalTtlSeconds: number,
    private readonly sessionIdleSeconds: number,
    private readonly maxToolCallsPerStep: number,
    private readonly maxActiveTurnsPerUser: number,
  ) {}

  /** Starts the session's oldest queued turn, unless one of its turns is already active. */
  async activateNext(sessionId: string): Promise<string | undefined> {
    return withTransaction(this.db, async (client) => {
      // Serialises lane changes of one session across every worker copy.
      await client.query('SELECT id FROM sessions WHERE id = $1 FOR UPDATE', [sessionId]);
      const active = await client.query('SELECT 1 FROM turns WHERE session_id = $1 AND status = ANY($2) LIMIT 1', [
        sessionId,
        ACTIVE_STATUSES,
      ]);
      if (active.rowCount !== 0) return undefined;
      const turn = await headOfLane(client, sessionId);
      if (!turn?.due || !(await hasFreeSlot(client, turn.user_id, this.maxActiveTurnsPerUser))) return undefined;
      // The preferences in force when the turn starts apply to the whole turn.
      await client.query(
        `UPDATE turns t SET status = 'running', started_at = NOW(), version = version + 1,
           max_iterations = p.max_iterations, autonomous = p.autonomous_mode, model = p.default_model
         FROM user_preferences p WHERE t.id = $1 AND p.user_id = t.user_id`,
        [turn.id],
      );
      await insertUserMessages(client, sessionId, turn);
      await client.query('UPDATE sessions SET last_activity_at = NOW() WHERE id = $1', [sessionId]);
      await appendOutbox(client, turn.id, [
        outboxEvent({ type: 'turn_started', session_key: turn.session_key }),
        outboxJob('agent-turns', 'advance', { turnId: turn.id }),
        sessionIdleDigestJob(sessionId, turn.id, this.sessionIdleSeconds),
      ]);
      return turn.id;
    });
  }

  async dispatch(state: TurnState, task: TaskRow): Promise<boolean> {
    return this.guarded(state, async (client) => {
      await client.query(`UPDATE tasks SET status = 'in_progress', started_at = NOW() WHERE id = $1`, [task.id]);
      return [outboxJob('tool-calls', 'run-tool', { taskId: task.id, turnId: state.turn.id }, { jobId: jobId('task', task.id) })];
    });
  }

  async awaitApproval(state: TurnState): Promise<boolean> {
    return this.guarded(state, async () => [], 'awaiting_approval');
  }

  async askUser(state: TurnState, remaining: TaskRow[]): Promise<boolean> {
    const failed = state.tasks.filter((task) => task.failure === 'error' && !task.asked).map((task) => task.ref);
    return this.guarded(
      state,
      async () => [
        outboxEvent({
          type: 'ask_user_continue',
          question: `${failed.join(', ')} failed even after a retry. Continue with the remaining tasks?`,
          remaining_tasks: remaining.map((task) => task.ref),
        }),
      ],
      'awaiting_user',
    );
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
    return this.claimed(turn.id, claim, async (client) => {
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
      await client.query('UPDATE turns SET iterations = $2 WHERE id = $1', [turn.id, iteration]);
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
    return this.claimed(turn.id, claim, async (client) => {
      // The step's usage commits with its outcome: a step retried after a crash is counted once.
      await recordModelUsage(client, turn, options.usage);
      await client.query(`INSERT INTO messages (session_id, turn_id, role, content) VALUES ($1, $2, 'assistant', $3)`, [
        turn.session_id,
        turn.id,
        content,
      ]);
      await client.query(
        `UPDATE turns SET status = $2, finished_at = NOW(), iterations = iterations + $3 WHERE id = $1`,
        [turn.id, status, options.countIteration ? 1 : 0],
      );
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

  private async guarded(
    state: TurnState,
    change: (client: DbClient) => Promise<OutboxEntry[]>,
    status?: string,
  ): Promise<boolean> {
    return withTransaction(this.db, async (client) => {
      const updated = await client.query(
        `UPDATE turns SET version = version + 1, status = COALESCE($3, status)
         WHERE id = $1 AND version = $2 AND status = 'running' AND claim IS NULL`,
        [state.turn.id, state.turn.version, status ?? null],
      );
      if (updated.rowCount !== 1) return false;
      await appendOutbox(client, state.turn.id, [...(await change(client)), ...(status ? [parkedEntry(state)] : [])]);
      return true;
    });
  }

  private async claimed(turnId: string, claim: string, change: (client: DbClient) => Promise<OutboxEntry[]>): Promise<boolean> {
    return withTransaction(this.db, async (client) => {
      const updated = await client.query(
        `UPDATE turns SET claim = NULL, version = version + 1 WHERE id = $1 AND claim = $2 AND status = 'running'`,
        [turnId, claim],
      );
      if (updated.rowCount !== 1) return false;
      await appendOutbox(client, turnId, await change(client));
      return true;
    });
  }
}

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
