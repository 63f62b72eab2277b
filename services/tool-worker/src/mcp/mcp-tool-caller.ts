import { McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fail, mcpServerOf, RefRegistry, stripUuids, ToolInputError, type Runtime, type ToolResult } from '@assistant/shared';
import type { Attempt, Refusal, ToolPlan } from '../tool-plan';
import type { ToolTask } from '../run-tool';
import { McpUnavailableError, type McpConnection } from './mcp-connection';
import type { McpHub } from './mcp-hub';
import { McpRefs } from './mcp-refs';
import { capText, MCP_RESULT_MAX_CHARS, resultText, toToolResult } from './mcp-result';
import { acceptedArguments, schemaProblems } from './mcp-schemas';

/** A tool only gets a second attempt when its server says a repeat is harmless (docs/tools.md#mcp-tools). */
const IDEMPOTENT_ATTEMPTS = 2;

export type FinishTask = (result: ToolResult) => Promise<void>;

/**
 * Runs the tasks of MCP tools with the guarantees of the built-in ones: arguments checked against
 * the tool's JSON Schema, refs in and out, `TOOL_TIMEOUT_MS` with cancellation sent to the server,
 * a retry only for idempotent tools, and a durable "sent" mark so that a call which may have
 * reached its server before a crash is never silently sent again.
 */
export class McpToolCaller {
  constructor(
    private readonly runtime: Runtime,
    private readonly hub: McpHub,
  ) {}

  /** True for `<server>__<tool>` names of a configured server. */
  owns(toolName: string): boolean {
    const server = mcpServerOf(toolName);
    return server !== undefined && this.hub.get(server) !== undefined;
  }

  async plan(task: ToolTask, finish: FinishTask): Promise<ToolPlan | Refusal> {
    const server = mcpServerOf(task.tool_name) as string;
    const toolName = task.tool_name.slice(server.length + 2);
    const connection = this.hub.get(server) as McpConnection;
    const timeoutMs = this.runtime.config.TOOL_TIMEOUT_MS;
    // Waiting for the connection, here and before each attempt, takes at most TOOL_TIMEOUT_MS in all.
    const connectBy = Date.now() + timeoutMs;
    await connection.ready(timeoutMs);
    const live = connection.find(toolName);
    const known = live.tool?.entry ?? (await this.runtime.mcp.tools()).find((entry) => entry.name === task.tool_name);
    const idempotent = known?.idempotent === true;

    const sent = await this.runtime.db.query<{ sent_at: Date | null }>('SELECT sent_at FROM tasks WHERE id = $1', [task.id]);
    if (sent.rows[0]?.sent_at && !idempotent) return outcomeUnknown(task.tool_name, server);
    if (task.arguments === null)
      return invalid(fail('The arguments were not a valid JSON object.', 'Send the arguments as a JSON object.'));

    const refs = new McpRefs(new RefRegistry(this.runtime.db, task.session_id, task.user_id), server);
    let args: Record<string, unknown>;
    try {
      args = await refs.reveal(task.arguments);
    } catch (error) {
      if (error instanceof ToolInputError) return invalid(error.toResult());
      throw error;
    }
    if (live.tool) {
      const accepted = acceptedArguments(live.tool.validate, args);
      if (!accepted) {
        const problems = stripUuids(schemaProblems(live.tool.validate));
        return invalid(fail(`Invalid arguments for ${task.tool_name}: ${problems}.`, 'Fix these arguments and call the tool again.'));
      }
      args = accepted;
    }
    if (!live.tool && connection.connected) return invalid(fail(live.problem as string, 'Call one of the tools you were given.'));
    return {
      maxAttempts: idempotent ? IDEMPOTENT_ATTEMPTS : 1,
      timeoutMs,
      attempt: () => this.attempt(task, connection, toolName, args, refs, timeoutMs, connectBy, finish),
    };
  }

  private async attempt(
    task: ToolTask,
    connection: McpConnection,
    toolName: string,
    args: Record<string, unknown>,
    refs: McpRefs,
    timeoutMs: number,
    connectBy: number,
    finish: FinishTask,
  ): Promise<Attempt> {
    // A retry after the connection failed reconnects now rather than after the backoff.
    await connection.ready(connectBy - Date.now());
    const live = connection.find(toolName);
    if (!live.tool) return { kind: connection.connected ? 'error' : 'unavailable', message: live.problem as string };
    // Durable before the request leaves: a worker that dies from here on leaves a call that may have happened.
    await this.runtime.db.query('UPDATE tasks SET sent_at = NOW() WHERE id = $1', [task.id]);
    const controller = new AbortController();
    const timer = setTimeout(() => controller.abort(new Error(`timed out after ${timeoutMs} ms`)), timeoutMs);
    let result: CallToolResult;
    try {
      result = await connection.call(toolName, args, controller.signal, timeoutMs);
    } catch (error) {
      if (controller.signal.aborted) return { kind: 'timeout' };
      // The server's own error answer: a UUID in it gets its ref, as in a result, so the model can name the record.
      if (error instanceof McpError) return { kind: 'error', message: await refs.hide(capText(error.message)) };
      const kind = error instanceof McpUnavailableError ? 'unavailable' : 'error';
      return { kind, message: stripUuids(error instanceof Error ? error.message : String(error)) };
    } finally {
      clearTimeout(timer);
    }
    // Cut before the refs are registered (bounded work), and again after (a ref is not as long as a UUID).
    const text = capText(await refs.hide(capText(resultText(result), 2 * MCP_RESULT_MAX_CHARS)));
    await finish(toToolResult(connection.name, toolName, text, result.isError === true));
    return { kind: 'done' };
  }
}

function invalid(result: ToolResult): Refusal {
  return { refusal: { result, failure: 'invalid' } };
}

function outcomeUnknown(toolName: string, server: string): Refusal {
  return {
    refusal: {
      failure: 'unknown',
      result: fail(
        `The outcome of ${toolName} is unknown: the call may have reached the ${server} server before the tool worker stopped, and the tool is not marked idempotent, so it was not sent again.`,
        'Tell the user the outcome is unknown and that they may want to check; do not call it again unless they ask.',
      ),
    },
  };
}
