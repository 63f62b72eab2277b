// An MCP server (stdio) one of whose tools is out of shape: its inputSchema lacks "type": "object",
// as some servers in the wild send it. Built on the SDK's low-level Server, which sends tools as given.
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';

const tools = [
  { name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'shapeless', description: 'Its input schema has no type.', inputSchema: {} },
];
const server = new Server({ name: 'loose', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
await server.connect(new StdioServerTransport());
