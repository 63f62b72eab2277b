// An MCP server (stdio) one of whose tools is out of shape: its inputSchema lacks "type": "object",
// as some servers in the wild send it. Built on the SDK's low-level Server, which sends tools as given.
// With the argument `unversioned`, its handshake answer is out of shape too (serverInfo without a version).
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import process from 'node:process';

const tools = [
  { name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object' }, annotations: { readOnlyHint: true } },
  { name: 'shapeless', description: 'Its input schema has no type.', inputSchema: {} },
];
const info = process.argv[2] === 'unversioned' ? { name: 'loose' } : { name: 'loose', version: '1.0.0' };
const server = new Server(info, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, async () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, async () => ({ content: [{ type: 'text', text: 'pong' }] }));
await server.connect(new StdioServerTransport());
