import { mcpServerOf, type McpToolEntry } from '../mcp/mcp-catalog';
import { namesByUuid, stripUuids } from '../text';
import { getTool, modelTools, type ModelTool } from './index';
import { parseToolArgs, type DescribeContext } from './tool-spec';

/** A tool as `GET /v1/tools` shows it: what the model is offered, whether it changes data, where it comes from. */
export interface OfferedTool extends ModelTool {
  mutates: boolean;
  /** `builtin`, or the name of the MCP server that provides it. */
  source: string;
}

/** The built-in tools first (in catalog order), then the MCP tools (by name): the same order every time. */
export function offeredTools(mcp: readonly McpToolEntry[]): OfferedTool[] {
  return [
    ...modelTools.map((tool) => ({ ...tool, mutates: getTool(tool.name)?.mutates ?? true, source: 'builtin' })),
    ...mcp.map((tool) => ({
      name: tool.name,
      description: tool.description,
      parameters: tool.parameters,
      mutates: !tool.readOnly,
      source: tool.server,
    })),
  ];
}

/** The function definitions for the model: built-in and MCP tools alike. */
export function toolsForModel(mcp: readonly McpToolEntry[]): ModelTool[] {
  return [...modelTools, ...mcp.map(({ name, description, parameters }) => ({ name, description, parameters }))];
}

/**
 * The task's line in the task list and whether it waits for approval in manual mode. An MCP
 * tool changes data unless its annotations say `readOnlyHint: true` (docs/tools.md#mcp-tools).
 * A built-in call whose arguments its schema refuses, or that names an entity by a UUID (which
 * the ref registry refuses before anything is read or written), changes nothing: the tool worker
 * answers it with the problem at once, so the model can correct it, instead of the user approving
 * a call that cannot run.
 */
export function describeCall(
  name: string,
  args: Record<string, unknown> | undefined,
  mcp: readonly McpToolEntry[],
  context: DescribeContext,
): { description: string; mutates: boolean } {
  const spec = getTool(name);
  if (spec) {
    const parsed = args ? parseToolArgs(spec, args) : undefined;
    return {
      description: stripUuids(parsed?.success ? spec.describe(parsed.data, context) : `Call ${name}`),
      mutates: spec.mutates && parsed?.success !== false && !Object.entries(parsed?.data ?? {}).some(namesEntityByUuid),
    };
  }
  const tool = mcp.find((entry) => entry.name === name);
  if (tool) return { description: `Call ${tool.tool} (${tool.server})`, mutates: !tool.readOnly };
  // A tool of a server that is not connected yet: treated as changing data, the safe side.
  return { description: `Call ${name}`, mutates: mcpServerOf(name) !== undefined };
}

/** A `*_id` argument (a ref or a name, docs/tools.md#refs) holding a UUID. */
function namesEntityByUuid([key, value]: [string, unknown]): boolean {
  return key.endsWith('_id') && typeof value === 'string' && namesByUuid(value);
}
