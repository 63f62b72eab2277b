import { z } from 'zod';
import { httpUrl } from '../http-url';
import { ENTITY_TABLES } from '../ids/entities';

/**
 * A server's name prefixes its tools (`<name>__<tool>`) and its refs (`<name>_<n>`), so it may
 * hold neither `__` nor a trailing `_` (the tool's part would stop being unambiguous), nor be the
 * name of an entity kind (its refs would collide with `folder_1` and the like in the ID registry).
 * Otherwise it is what a function name may hold, as the model calls its tools by those names.
 */
const serverName = z
  .string()
  .regex(/^[A-Za-z][A-Za-z0-9_-]{0,29}$/, 'must be 1 to 30 letters, digits, "_" or "-", starting with a letter')
  .refine((name) => !name.includes('__') && !name.endsWith('_'), 'must not hold "__" or end with "_"')
  .refine(
    (name) => !Object.hasOwn(ENTITY_TABLES, name.toLowerCase()) && name.toLowerCase() !== 'task',
    'must not be the name of an entity kind or "task"',
  );

const stringMap = z.record(z.string(), z.string());

// `type`, as other MCP clients' configurations write it, may come along; it must then say the same.
export const stdioServerSchema = z.strictObject({
  name: serverName,
  type: z.literal('stdio').optional(),
  command: z.string().trim().min(1, 'must not be blank'),
  args: z.array(z.string()).optional(),
  env: stringMap.optional(),
});

export const httpServerSchema = z.strictObject({
  name: serverName,
  type: z.enum(['http', 'streamable-http']).optional(),
  url: httpUrl(),
  headers: stringMap.optional(),
});

export const mcpServerSchema = z.union([stdioServerSchema, httpServerSchema], {
  error: 'must be {"name","command","args"?,"env"?} (stdio) or {"name","url","headers"?} (Streamable HTTP), with no other keys but "type"',
});
export type McpServerConfig = z.infer<typeof mcpServerSchema>;
export type McpStdioServerConfig = z.infer<typeof stdioServerSchema>;

export function isStdioServer(server: McpServerConfig): server is McpStdioServerConfig {
  return 'command' in server;
}

const NOT_A_LIST = 'must be a JSON array of MCP servers (see README, "MCP servers")';

/** `MCP_SERVERS` (docs/tools.md#mcp-tools), a JSON array; unset or blank means none. */
export const mcpServersSetting = z
  .string()
  .optional()
  .transform((value, ctx): unknown => {
    if (value === undefined || value.trim() === '') return [];
    try {
      return JSON.parse(value);
    } catch {
      ctx.addIssue({ code: 'custom', message: NOT_A_LIST });
      return z.NEVER;
    }
  })
  .pipe(
    z.array(mcpServerSchema, NOT_A_LIST).superRefine((servers, ctx) => {
      const seen = new Set<string>();
      servers.forEach((server, index) => {
        if (seen.has(server.name)) ctx.addIssue({ code: 'custom', path: [index, 'name'], message: `"${server.name}" is used twice` });
        seen.add(server.name);
      });
    }),
  );
