import type { DbClient } from '../db';
import { withTransaction } from '../db';
import type { McpToolEntry } from '../mcp/mcp-catalog';
import { describeCall } from '../tools/tool-directory';
import { insertModelUsage, usageParams, type ModelUsage } from '../usage/usage-store';
import { approvalEntries } from './approvals';
import { runToolJob } from './dispatch';
import { laneAfter, lockLanes } from './finishing';
import { outboxEvent, type OutboxEntry } from './outbox';
import type { TurnMachine } from './turn-machine';
import type { PlannedCall, TurnRow, TurnState } from './turn-state';
import { recordUnrunTask } from './unrun-tasks';

/**
 * The iteration limit: the step that would reach the turn's `max_iterations` is its last. The
 * model gets no tools for it, so it must answer, and the turn ends `limit_reached` (docs/agent.md).
 */
export function isLastIteration(turn: Pick<TurnRow, 'iterations' | 'max_iterations'>): boolean {
  return turn.iterations + 1 >= turn.max_iterations;
}

/** Takes ownership of the next model call for this job (see decide() in the agent). */
export async function claimModelCall(m: TurnMachine, state: TurnState, jobIdentity: string): Promise<boolean> {
  const claimed = await m.db.query(
    `UPDATE turns SET claim = $3, version = version + 1 WHERE id = $1 AND version = $2 AND status = 'running' AND claim IS NULL`,
    [state.turn.id, state.turn.version, jobIdentity],
  );
  return claimed.rowCount === 1;
}

/**
 * Records the tool calls the model planned as tasks (and approvals in manual mode). The first
 * task that may run at once is sent to the tool worker in the same transaction, as dispatch()
 * would send it: answers 'dispatched' then, since the turn waits for that tool. Like every step,
 * false when another job took the claim meanwhile.
 */
export async function planTasks(
  m: TurnMachine,
  state: TurnState,
  claim: string,
  step: { content: string; calls: PlannedCall[]; mcpTools?: readonly McpToolEntry[]; usage?: ModelUsage | undefined },
): Promise<boolean | 'dispatched'> {
  const { turn } = state;
  let dispatched = false;
  const recorded = await recordStep(m, state, claim, { iterations: 1 }, async (client) => {
    dispatched = false;
    // Only what goes back to the model: the screen's parsed copy of the arguments would double the row.
    const toolCalls = JSON.stringify(step.calls.map(({ id, name, arguments: text }) => ({ id, name, arguments: text })));
    let position = (await recordModelOutput(client, turn, step.usage, step.content, toolCalls)).lastPosition;
    const iteration = turn.iterations + 1;
    const entries: OutboxEntry[] = [];
    const planned: { id: string; description: string; tool_name: string }[] = [];
    for (const call of step.calls) {
      position += 1;
      const args = call.args;
      if (!args) {
        entries.push(...(await recordUnrunTask(client, turn, { call, iteration, position, maxCalls: m.maxToolCallsPerStep })));
        planned.push({ id: `task_${position}`, description: `Call ${call.name}`, tool_name: call.name });
        continue;
      }
      const { description, mutates } = describeCall(call.name, args, step.mcpTools ?? []);
      const needsApproval = mutates && !turn.autonomous;
      const runsNow = !needsApproval && !dispatched;
      const ref = `task_${position}`;
      const inserted = await client.query<{ id: string }>(
        `INSERT INTO tasks (turn_id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status, started_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, CASE WHEN $10 = 'in_progress' THEN NOW() END) RETURNING id`,
        [
          turn.id,
          ref,
          position,
          iteration,
          call.id,
          call.name,
          JSON.stringify(args),
          description,
          mutates,
          needsApproval ? 'awaiting_approval' : runsNow ? 'in_progress' : 'pending',
        ],
      );
      planned.push({ id: ref, description, tool_name: call.name });
      if (runsNow) {
        dispatched = true;
        entries.push(runToolJob(turn.id, inserted.rows[0]?.id as string));
      }
      if (needsApproval) {
        const approval = await client.query<{ id: string }>(
          `INSERT INTO approvals (user_id, turn_id, task_id, expires_at)
           VALUES ($1, $2, $3, NOW() + make_interval(secs => $4)) RETURNING id`,
          [turn.user_id, turn.id, inserted.rows[0]?.id, m.approvalTtlSeconds],
        );
        entries.push(...approvalEntries(m, approval.rows[0]?.id as string, { ref, name: call.name, args }));
      }
    }
    if (planned.length >= 2) {
      entries.unshift(outboxEvent({ type: 'task_list', tasks: planned.map((task) => ({ ...task, status: 'pending' as const })) }));
    }
    return entries;
  });
  return recorded && dispatched ? 'dispatched' : recorded;
}

/** Ends the turn with the model's answer (or an explanation written for the user). */
export async function answer(
  m: TurnMachine,
  state: TurnState,
  claim: string,
  content: string,
  status: 'completed' | 'limit_reached',
  options: { countIteration: boolean; iterationLimit?: number; usage?: ModelUsage | undefined },
): Promise<boolean> {
  const { turn } = state;
  return recordStep(m, state, claim, { iterations: options.countIteration ? 1 : 0, status }, async (client) => {
    await lockLanes(client, turn);
    const { queued } = await recordModelOutput(client, turn, options.usage, content, null);
    return [
      outboxEvent({ type: 'message', role: 'assistant', content }),
      ...(options.iterationLimit !== undefined ? [outboxEvent({ type: 'iteration_limit', max_iterations: options.iterationLimit })] : []),
      outboxEvent({ type: 'done', status }),
      // The next turn's lane job, only when one of the user's turns waits for it.
      ...(queued ? [laneAfter(turn.id, turn.session_id)] : []),
    ];
  });
}

/**
 * Records a model step's outcome: `change` writes its rows, then one update of the turn
 * releases the claim and queues the entries; a claim lost meanwhile rolls all of it back.
 */
async function recordStep(
  m: TurnMachine,
  state: TurnState,
  claim: string,
  turnChange: { iterations: number; status?: 'completed' | 'limit_reached' },
  change: (client: DbClient) => Promise<OutboxEntry[]>,
): Promise<boolean> {
  const { turn } = state;
  const entries = await withTransaction(m.db, async (client) => {
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
  await m.outbox.publish(turn.id, turn.origin, entries);
  return true;
}

/**
 * What every step stores of the model's output, in one statement: the call's usage (it commits
 * with the step's outcome, so a step retried after a crash is counted once) and the assistant's
 * message. Answers what the step goes on with: the turn's last task position, and whether one of
 * its user's turns is queued (read after the lane locks when the step ends the turn).
 */
async function recordModelOutput(
  client: DbClient,
  turn: TurnRow,
  usage: ModelUsage | undefined,
  content: string,
  toolCalls: string | null,
): Promise<{ lastPosition: number; queued: boolean }> {
  const found = await client.query<{ last_position: number; queued: boolean }>(
    `WITH usage AS (${insertModelUsage(1)}),
       message AS (INSERT INTO messages (session_id, turn_id, role, content, tool_calls) VALUES ($7, $1, 'assistant', $8, $9))
     SELECT (SELECT COALESCE(MAX(position), 0) FROM tasks WHERE turn_id = $1)::int AS last_position,
       EXISTS (SELECT 1 FROM turns WHERE user_id = $3 AND status = 'queued') AS queued`,
    [...usageParams(turn, usage), turn.session_id, content, toolCalls],
  );
  const row = found.rows[0];
  return { lastPosition: row?.last_position ?? 0, queued: row?.queued === true };
}

/** Rolls back a model step whose claim another job took meanwhile. */
class ClaimLost extends Error {}
