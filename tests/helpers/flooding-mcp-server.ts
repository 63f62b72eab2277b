import type http from 'node:http';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { LocalHttpServer } from '../../scripts/lib/local-http-server';

interface Request {
  id?: number;
  method: string;
  params?: { protocolVersion?: string; name?: string };
}

const FLOOD_BYTES = 30 * 1024 * 1024;
const readOnly = { readOnlyHint: true };
const tools = [
  { name: 'ping', description: 'Answers pong.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'flood_json', description: 'Answers with 30 MB of JSON.', inputSchema: { type: 'object' }, annotations: readOnly },
  { name: 'flood_event', description: 'Answers with one SSE event of 30 MB.', inputSchema: { type: 'object' }, annotations: readOnly },
  {
    name: 'chatty',
    description: 'Sends 12 MB of small SSE events, then its answer.',
    inputSchema: { type: 'object' },
    annotations: readOnly,
  },
];

/**
 * An MCP server (Streamable HTTP, written by hand so it can send what the SDK's server never would)
 * whose answers are far larger than the tool worker reads from one server.
 */
export class FloodingMcpServer extends LocalHttpServer {
  get url(): string {
    return `${this.baseUrl}/mcp`;
  }

  protected async handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): Promise<void> {
    if (req.method !== 'POST') return void res.writeHead(405).end();
    const { id, method, params } = JSON.parse(raw) as Request;
    if (id === undefined) return void res.writeHead(202).end();
    const json = { 'content-type': 'application/json' };
    const sse = { 'content-type': 'text/event-stream' };
    const message = (result: unknown) => JSON.stringify({ jsonrpc: '2.0', id, result });
    const head = `{"jsonrpc":"2.0","id":${id},"result":{"content":[{"type":"text","text":"`;
    if (method === 'initialize') {
      const info = {
        protocolVersion: params?.protocolVersion,
        capabilities: { tools: {} },
        serverInfo: { name: 'flood', version: '1.0.0' },
      };
      return void res.writeHead(200, json).end(message(info));
    }
    if (method === 'tools/list') return void res.writeHead(200, json).end(message({ tools }));
    if (params?.name === 'flood_json') return send(res.writeHead(200, json), head, 'a', '"}]}}');
    if (params?.name === 'flood_event') return send(res.writeHead(200, sse), `data: ${head}`, 'a', '"}]}}\n\n');
    const pong = message({ content: [{ type: 'text', text: `${params?.name} ran` }] });
    if (params?.name === 'chatty') {
      const note = `data: ${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/message', params: { level: 'info', data: 'a'.repeat(1_000) } })}\n\n`;
      return send(res.writeHead(200, sse), '', note, `data: ${pong}\n\n`);
    }
    return void res.writeHead(200, json).end(pong);
  }
}

/** Sends `head`, then `filler` repeated to FLOOD_BYTES, then `tail`, at the pace the client reads. */
async function send(res: http.ServerResponse, head: string, filler: string, tail: string): Promise<void> {
  const block = filler.repeat(Math.ceil(65_536 / filler.length));
  function* body() {
    yield head;
    for (let sent = 0; sent < FLOOD_BYTES; sent += block.length) yield block;
    yield tail;
  }
  // The tool worker hangs up once it has read too much.
  await pipeline(Readable.from(body()), res).catch(() => undefined);
}
