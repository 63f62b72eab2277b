/** CONTRACT §4, as the console reads it: one variant per event type, fields as sent. */
type Fields = {
  turn_started: { session_key: string };
  task_list: { tasks: { id: string; description: string; tool_name: string; status: 'pending' }[] };
  task_update: { task_id: string; status: 'in_progress' | 'completed' | 'failed' | 'skipped'; error?: string; duration_ms?: number };
  tool_approval_request: { approval_id: string; task_id: string; tool_name: string; arguments: Record<string, unknown> };
  tool_approved: { approval_id: string; task_id: string };
  tool_rejected: { approval_id: string; task_id: string };
  tool_start: { task_id: string; tool_name: string; arguments: Record<string, unknown> };
  tool_retry: { task_id: string; tool_name: string; attempt: number; max_attempts: number; reason: string };
  tool_timeout: { task_id: string; tool_name: string; timeout_seconds: number };
  tool_complete: { task_id: string; tool_name: string; result: string };
  tool_failed: { task_id: string; tool_name: string; error: string };
  ask_user_continue: { question: string; remaining_tasks: string[] };
  token: { delta: string };
  message: { role: 'assistant'; content: string };
  iteration_limit: { max_iterations: number };
  error: { code: string; message: string };
  done: { status: 'completed' | 'limit_reached' | 'failed' | 'cancelled' };
};

export type EventType = keyof Fields;
export type TurnEvent = { [T in EventType]: { type: T; turn_id: string; seq: number } & Fields[T] }[EventType];

/** An SSE block's fields; `undefined` for comment-only blocks (the keepalives). */
export function parseSseBlock(block: string): { id: string; data: string } | undefined {
  let id = '';
  const data: string[] = [];
  for (const line of block.split('\n')) {
    if (line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon < 0 ? line : line.slice(0, colon);
    const value = colon < 0 ? '' : line.slice(colon + 1).replace(/^ /, '');
    if (field === 'id') id = value;
    else if (field === 'data') data.push(value);
  }
  return data.length > 0 ? { id, data: data.join('\n') } : undefined;
}
