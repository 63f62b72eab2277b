import type { Queryable } from '@assistant/shared';
import type { ScreenedCall } from './untrusted-output';

/** Three identical consecutive tool calls stop the loop (docs/agent.md#iterations). */
export const LOOP_LENGTH = 3;

/** The name of a tool that would be called LOOP_LENGTH times in a row with the same arguments, if any. */
export async function repeatedCall(
  db: Queryable,
  turn: { id: string; iterations: number },
  calls: ScreenedCall[],
): Promise<string | undefined> {
  // The turn's first step has no earlier calls to repeat.
  const history = turn.iterations === 0 ? [] : await recentCallSignatures(db, turn.id, LOOP_LENGTH - 1);
  // A refused call has no arguments to compare: it never counts as a repeat (max_iterations bounds it).
  const sequence = [...history, ...calls.map((call) => (call.args ? callSignature(call.name, call.args) : `refused ${call.id}`))];
  for (let i = LOOP_LENGTH - 1; i < sequence.length; i++) {
    const window = sequence.slice(i - LOOP_LENGTH + 1, i + 1);
    if (window.every((signature) => signature === window[0])) return window[0]?.split(' ')[0];
  }
  return undefined;
}

/** Tool calls of the whole turn so far, oldest first, as `name + arguments` signatures. */
async function recentCallSignatures(db: Queryable, turnId: string, count: number): Promise<string[]> {
  // A call refused when planned (unrun-tasks.ts) is stored with `{}` for its arguments and finished
  // in the statement that planned it: like a refused call of this step, it repeats nothing.
  const found = await db.query<{ id: string; tool_name: string; arguments: unknown; refused: boolean }>(
    `SELECT id, tool_name, arguments, finished_at IS NOT DISTINCT FROM created_at AS refused
     FROM tasks WHERE turn_id = $1 ORDER BY position DESC LIMIT $2`,
    [turnId, count],
  );
  return found.rows.reverse().map((row) => (row.refused ? `refused ${row.id}` : callSignature(row.tool_name, row.arguments)));
}

function callSignature(name: string, args: unknown): string {
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
