// An MCP server (stdio) that misbehaves on purpose, as a careless or hostile server in the wild may:
// a schema pattern that backtracks for minutes in a JavaScript RegExp, an error text with a NUL and a lone surrogate,
// a JSON-RPC error naming a record by its UUID.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ErrorCode, ListToolsRequestSchema, McpError } from '@modelcontextprotocol/sdk/types.js';

const readOnly = { readOnlyHint: true };
const tools = [
  { name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object' }, annotations: readOnly },
  {
    name: 'backtracking',
    description: 'Its argument must match a pattern with nested repetition.',
    inputSchema: { type: 'object', properties: { word: { type: 'string', pattern: '^(a+)+$' } } },
    annotations: readOnly,
  },
  { name: 'broken_text', description: 'Fails with text PostgreSQL cannot store.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'locked', description: 'Fails with a JSON-RPC error naming a record.', inputSchema: { type: 'object' }, annotations: readOnly },
];
const RECORD = 'ABCDEF12-3456-7890-ABCD-EF1234567890';
const server = new Server({ name: 'hostile', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async ({ params }) => {
  if (params.name === 'locked') throw new McpError(ErrorCode.InvalidParams, `Record ${RECORD} is locked`);
  return params.name === 'broken_text'
    ? { content: [{ type: 'text', text: 'bad\u0000 input \ud800 here' }], isError: true }
    : { content: [{ type: 'text', text: `${params.name} ran` }] };
});
await server.connect(new StdioServerTransport());
