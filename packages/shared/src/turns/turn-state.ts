import type { MediaRef } from '../channels/media-download';
import type { Queryable } from '../db';
import type { ChannelAddress } from '../jobs';
import { outboxRemoval, type OutboxEntry } from './outbox';
import type { TaskStatus, TurnStatus } from './turn-status';

export interface TurnRow {
  id: string;
  user_id: string;
  session_id: string;
  session_key: string;
  status: TurnStatus;
  input: string;
  /** The user messages the turn answers: more than one when messages were merged into it. */
  input_count: number;
  iterations: number;
  max_iterations: number;
  autonomous: boolean;
  model: string | null;
  version: number;
  claim: string | null;
  /** The channel photos of the turn's messages for the model (VISION), by the provider's reference. */
  photos: TurnPhoto[];
  /** The chat the turn came from, if any: its events are delivered there too. */
  origin: ChannelAddress | null;
  /** The user's `use_rag_by_default` as the turn was read: its model requests get the documents that match it. */
  use_rag: boolean;
}

export interface TurnPhoto {
  /** The place of the photo's message in the turn: 0 is `input`, 1 the first merged message… */
  input: number;
  ref: MediaRef;
}

export interface TaskRow {
  id: string;
  ref: string;
  position: number;
  iteration: number;
  call_id: string;
  tool_name: string;
  arguments: Record<string, unknown> | null;
  description: string;
  mutates: boolean;
  status: TaskStatus;
  failure: 'invalid' | 'error' | 'unknown' | null;
  asked: boolean;
}

/** A tool call of a model step, as screened by the agent (see untrusted-output.ts there). */
export interface PlannedCall {
  id: string;
  name: string;
  /** The argument text stored and sent back to the model. */
  arguments: string;
  /** The parsed arguments, when the call may run. */
  args?: Record<string, unknown>;
  /** Why the call cannot run; the task fails with this, without a retry. */
  problem?: string;
  /**
   * The refusal as it counts toward the tool's gotchas (docs/memory.md#gotchas), without the
   * model's own text (a gotcha is shown in every session); absent for a tool that does not exist.
   */
  mistake?: string;
}

/** A turn, the tasks the model planned in its latest iteration, and what it still owes (see outbox.ts). */
export interface TurnState {
  turn: TurnRow;
  tasks: TaskRow[];
  outbox: OutboxEntry[];
}

/**
 * One round trip: the turn with the tasks of its latest iteration as a JSON array, and whether
 * its user wants retrieval (so a model step can search along with its claim). Built once: the
 * text is the prepared statement's key.
 */
const LOAD_TURN_STATE = `WITH removed AS (${outboxRemoval('$1', '$2')})
   SELECT t.id, t.user_id, t.session_id, t.session_key, t.status,
          array_to_string(ARRAY[t.input] || t.merged_inputs, E'\n') AS input, 1 + cardinality(t.merged_inputs) AS input_count, t.iterations,
          COALESCE(t.max_iterations, 15) AS max_iterations, COALESCE(t.autonomous, false) AS autonomous,
          t.model, t.version, t.claim, t.origin, COALESCE((SELECT outbox FROM removed), t.outbox) AS outbox,
          CASE WHEN t.attachment IS NULL THEN t.merged_attachments
               ELSE jsonb_build_array(jsonb_build_object('input', 0, 'ref', t.attachment)) || t.merged_attachments END AS photos,
          COALESCE((SELECT p.use_rag_by_default FROM user_preferences p WHERE p.user_id = t.user_id), true) AS use_rag,
          COALESCE((SELECT json_agg(json_build_object(
              'id', k.id, 'ref', k.ref, 'position', k.position, 'iteration', k.iteration, 'call_id', k.call_id,
              'tool_name', k.tool_name, 'arguments', k.arguments, 'description', k.description, 'mutates', k.mutates,
              'status', k.status, 'failure', k.failure, 'asked', k.asked) ORDER BY k.position)
            FROM tasks k WHERE k.turn_id = t.id AND k.iteration = t.iterations), '[]'::json) AS tasks
   FROM turns t WHERE t.id = $1`;

/**
 * Reads a turn for its next decision. `published` are the keys of the batch that queued the
 * reading job (its `published`): the same statement removes them from the outbox, so the outbox
 * answered holds only what is still owed (a job run again, after parking or a retry, finds them
 * gone and writes nothing).
 */
export async function loadTurnState(db: Queryable, turnId: string, published: readonly string[] = []): Promise<TurnState | undefined> {
  const found = await db.query<TurnRow & { tasks: TaskRow[]; outbox: OutboxEntry[] }>(LOAD_TURN_STATE, [turnId, published]);
  const row = found.rows[0];
  if (!row) return undefined;
  const { tasks, outbox, ...turn } = row;
  return { turn, tasks, outbox };
}
