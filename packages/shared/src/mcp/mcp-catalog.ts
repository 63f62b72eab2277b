import { z } from 'zod';
import type { Redis } from '../redis';

/** Tools of MCP servers join the registry as `<server>__<tool>` (docs/tools.md#mcp-tools). */
export const MCP_TOOL_SEPARATOR = '__';

export function mcpToolName(server: string, tool: string): string {
  return `${server}${MCP_TOOL_SEPARATOR}${tool}`;
}

/** The server part of `<server>__<tool>`, if the name has that shape. */
export function mcpServerOf(name: string): string | undefined {
  const at = name.indexOf(MCP_TOOL_SEPARATOR);
  return at > 0 ? name.slice(0, at) : undefined;
}

const toolEntrySchema = z.object({
  name: z.string(),
  server: z.string(),
  tool: z.string(),
  description: z.string(),
  parameters: z.record(z.string(), z.unknown()),
  readOnly: z.boolean(),
  idempotent: z.boolean(),
});
export type McpToolEntry = z.infer<typeof toolEntrySchema>;

const serverStateSchema = z.object({
  server: z.string(),
  status: z.enum(['up', 'down']),
  error: z.string().optional(),
  tools: z.array(toolEntrySchema),
  updatedAt: z.string(),
});
export type McpServerState = z.infer<typeof serverStateSchema>;

/**
 * The one list of MCP tools every process agrees on. The tool worker, which holds the
 * connections, publishes each server's state to a Redis hash; the agent worker (building the
 * model's tools) and the gateway (`GET /v1/tools`) read it, so no other process spawns its own
 * copy of a stdio server. A server that went down keeps its last known tools (calls to them
 * fail with a clear result); only servers in this process's `MCP_SERVERS` are read, so a server
 * removed from the configuration disappears at once.
 */
export class McpCatalog {
  private readonly key: string;

  constructor(
    private readonly redis: Redis,
    prefix: string,
    private readonly servers: readonly string[],
    /** The most MCP tools offered: those past it, by name, are left out (runtime.ts: the model's limit). */
    private readonly maxTools = Number.POSITIVE_INFINITY,
  ) {
    this.key = `${prefix}:mcp:servers`;
  }

  get configured(): readonly string[] {
    return this.servers;
  }

  async publish(state: McpServerState): Promise<void> {
    await this.redis.hset(this.key, state.server, JSON.stringify(state));
  }

  async states(): Promise<McpServerState[]> {
    if (this.servers.length === 0) return [];
    const raw = await this.redis.hmget(this.key, ...this.servers);
    return raw.flatMap((value) => {
      if (value === null) return [];
      const parsed = serverStateSchema.safeParse(safeJson(value));
      return parsed.success ? [parsed.data] : [];
    });
  }

  /** Every known MCP tool up to `maxTools`, in a stable order (by name), so model requests stay cacheable. */
  async tools(): Promise<McpToolEntry[]> {
    return (await this.byName()).slice(0, this.maxTools);
  }

  /** The names of the tools past `maxTools`, which the model is not offered. */
  async leftOut(): Promise<string[]> {
    return (await this.byName()).slice(this.maxTools).map((tool) => tool.name);
  }

  private async byName(): Promise<McpToolEntry[]> {
    const states = await this.states();
    return states.flatMap((state) => state.tools).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  }
}

function safeJson(value: string): unknown {
  try {
    return JSON.parse(value);
  } catch {
    return undefined;
  }
}
