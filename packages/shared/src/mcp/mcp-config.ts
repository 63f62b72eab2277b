import { z } from 'zod';
import { ENTITY_TABLES } from '../ids/entities';

/**
 * A server's name prefixes its tools (`<name>__<tool>`) and its refs (`<name>_<n>`), so it may
 * hold neither `_` (those would stop being unambiguous) nor the name of an entity kind (its refs
 * would collide with `folder_1` and the like in the ID registry).
 */
const serverName = z
  .string()
  .regex(/^[a-z][a-z0-9-]{0,29}$/, 'must be 1 to 30 lowercase letters, digits or "-", starting with a letter')
  .refine((name) => !Object.hasOwn(ENTITY_TABLES, name) && name !== 'task', 'must not be the name of an entity kind or "task"');

const stringMap = z.record(z.string(), z.string());

export const stdioServerSchema = z.strictObject({
  name: serverName,
  command: z.string().min(1),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
});

export const httpServerSchema = z.strictObject({
  name: serverName,
  url: z.url({ protocol: /^https?$/ }),
  headers: stringMap.optional(),
});

export const mcpServerSchema = z.union([stdioServerSchema, httpServerSchema]);
export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type McpStdioServerConfig = z.infer<typeof stdioServerSchema>;

export function isStdioServer(server: McpServerConfig): server is McpStdioServerConfig {
  return 'command' in server;
}

/** `MCP_SERVERS` (docs/tools.md#mcp-tools), a JSON array; unset or blank means none. */
export const mcpServersSetting = z
  .string()
  .optional()
  .transform((value, ctx): unknown => {
    if (value === undefined || value.trim() === '') return [];
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: 'must be a JSON array of MCP servers (see README, "MCP servers")' });
      return z.NEVER;
    }
  })
  .pipe(
    z.array(mcpServerSchema).superRefine((servers, ctx) => {
      const seen = new Set<string>();
      servers.forEach((server, index) => {
        if (seen.has(server.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `"${server.name}" is used twice` });
        seen.add(server.name);
      });
    }),
  );
