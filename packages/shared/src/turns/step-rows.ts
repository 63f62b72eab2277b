import type { Queryable } from '../db';
import type { ModelUsage } from '../usage/usage-store';
import type { OutboxEntry } from './outbox';
import { NOT_FINISHED_SQL, type TaskStatus } from './turn-status';
import type { TaskRow, TurnRow } from './turn-state';

/** A task a model step plans; its id is chosen here, so the step's outbox entries can name it. */
export type NewTask = Pick<TaskRow, 'id' | 'ref' | 'position' | 'iteration' | 'call_id' | 'tool_name' | 'description' | 'mutates'> & {
  arguments: Record<string, unknown>;
  status: Extract<TaskStatus, 'pending' | 'awaiting_approval' | 'in_progress' | 'failed' | 'skipped'>;
  /** Set only for a task recorded finished (a call that will not run). */
  failure?: 'invalid' | null;
  result?: string;
  error?: string;
};

/** A message a model step adds to the conversation, in order: its assistant message, then tool messages. */
export interface StepMessage {
  role: 'assistant' | 'tool';
  content: string;
  tool_calls?: unknown[] | null;
  tool_call_id?: string;
}

/** What a model step stores with its outcome (model-steps.ts). */
export interface StepRecord {
  claim: string;
  usage: ModelUsage | undefined;
  /** The turn's change: iterations to add, and the final status when the step ends it. */
  iterations: number;
  status?: 'completed' | 'limit_reached';
  messages: StepMessage[];
  tasks?: NewTask[];
  approvals?: { id: string; task_id: string }[];
  approvalTtlSeconds?: number;
  entries: OutboxEntry[];
  /** Entries queued only when one of the user's turns is queued (read in the same statement). */
  ifQueued?: OutboxEntry[];
}

/**
 * Stores a model step's outcome in one statement: the turn releases the claim and queues the
 * entries, and only if that happened (the claim was still this job's) the messages, the tasks
 * and their approvals are inserted. A lost claim writes nothing of them: the turn ended while the
 * model answered (a cancel, an interruption). That call was made all the same, so its usage is
 * recorded and counted as the turn's iteration either way: a cancel cannot hide tokens from
 * DAILY_TOKEN_BUDGET. The usage commits with the outcome, so a step retried after a crash is
 * counted once, and its (turn, iteration) key makes a second recording a no-op. Answers whether
 * the step was recorded and, when `ifQueued` was given, whether those entries were queued.
 */
export async function recordStepRows(db: Queryable, turn: TurnRow, step: StepRecord): Promise<{ recorded: boolean; queued: boolean }> {
  const found = await db.query<{ recorded: boolean; queued: boolean }>(
    `WITH queued AS MATERIALIZED (
       SELECT $5::boolean AND EXISTS (SELECT 1 FROM turns WHERE user_id = $6 AND status = 'queued') AS queued),
     turn AS (
       UPDATE turns SET claim = NULL, version = version + 1, iterations = iterations + $7,
         outbox = outbox || $3::jsonb || CASE WHEN (SELECT queued FROM queued) THEN $4::jsonb ELSE '[]'::jsonb END,
         status = COALESCE($8, status), finished_at = CASE WHEN $8::text IS NULL THEN finished_at ELSE NOW() END
       WHERE id = $1 AND claim = $2 AND status = 'running' RETURNING id, session_id, user_id),
     usage AS (
       INSERT INTO model_usage (turn_id, iteration, user_id, prompt_tokens, cached_prompt_tokens, completion_tokens)
       SELECT id, $9, user_id, $10, $11, $12 FROM turns
       WHERE id = $1 AND (EXISTS (SELECT 1 FROM turn) OR NOT (${NOT_FINISHED_SQL}))
       ON CONFLICT (turn_id, iteration) DO NOTHING RETURNING turn_id),
     ended AS (
       UPDATE turns SET iterations = iterations + $7
       WHERE id = $1 AND NOT EXISTS (SELECT 1 FROM turn) AND EXISTS (SELECT 1 FROM usage)),
     messages AS (
       INSERT INTO messages (session_id, turn_id, role, content, tool_calls, tool_call_id)
       SELECT turn.session_id, turn.id, m.role, m.content, m.tool_calls, m.tool_call_id
       FROM turn, jsonb_to_recordset($13::jsonb) AS m(ord int, role text, content text, tool_calls jsonb, tool_call_id text)
       ORDER BY m.ord),
     tasks AS (
       INSERT INTO tasks (id, turn_id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status,
         failure, result, error, started_at, finished_at, duration_ms)
       SELECT k.id, turn.id, k.ref, k.position, k.iteration, k.call_id, k.tool_name, k.arguments, k.description, k.mutates, k.status,
         k.failure, k.result, k.error,
         CASE WHEN k.status IN ('in_progress', 'failed', 'skipped') THEN NOW() END,
         CASE WHEN k.status IN ('failed', 'skipped') THEN NOW() END,
         CASE WHEN k.status IN ('failed', 'skipped') THEN 0 END
       FROM turn, jsonb_to_recordset($14::jsonb) AS k(id uuid, ref text, position int, iteration int, call_id text, tool_name text,
         arguments jsonb, description text, mutates boolean, status text, failure text, result text, error text)),
     approvals AS (
       INSERT INTO approvals (id, user_id, turn_id, task_id, expires_at)
       SELECT a.id, turn.user_id, turn.id, a.task_id, NOW() + make_interval(secs => $15)
       FROM turn, jsonb_to_recordset($16::jsonb) AS a(id uuid, task_id uuid))
     SELECT EXISTS (SELECT 1 FROM turn) AS recorded, (SELECT queued FROM queued) AS queued`,
    [
      turn.id,
      step.claim,
      JSON.stringify(step.entries),
      JSON.stringify(step.ifQueued ?? []),
      step.ifQueued !== undefined,
      turn.user_id,
      step.iterations,
      step.status ?? null,
      turn.iterations + 1,
      step.usage?.promptTokens ?? 0,
      step.usage?.cachedPromptTokens ?? 0,
      step.usage?.completionTokens ?? 0,
      // Numbered, so the messages get their ids in this order.
      JSON.stringify(step.messages.map((message, ord) => ({ ord, ...message }))),
      JSON.stringify(step.tasks ?? []),
      step.approvalTtlSeconds ?? 0,
      JSON.stringify(step.approvals ?? []),
    ],
  );
  const row = found.rows[0];
  return { recorded: row?.recorded === true, queued: row?.queued === true };
}
