import { randomUUID } from 'node:crypto';
import { EventEmitter } from 'node:events';
import type http from 'node:http';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { isInitializeRequest } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { LocalHttpServer } from '../../scripts/lib/local-http-server';

export interface NotesCall {
  tool: string;
  args: Record<string, unknown>;
}

/**
 * The tests' own MCP server (Streamable HTTP, in the test process, built with the official SDK):
 * notes identified by UUIDs, and a write that waits until it is cancelled or released. It
 * records every call and every cancellation it receives, so tests can wait for them.
 */
export class NotesMcpServer extends LocalHttpServer {
  readonly notes = new Map<string, string>();
  readonly calls: NotesCall[] = [];
  readonly cancelled: string[] = [];
  private readonly changes = new EventEmitter();
  private readonly transports = new Map<string, StreamableHTTPServerTransport>();
  private readonly servers: McpServer[] = [];
  private readonly held: (() => void)[] = [];

  get url(): string {
    return `${this.baseUrl}/mcp`;
  }

  /** Resolves once `count` calls of `tool` have arrived. */
  waitForCalls(tool: string, count = 1): Promise<NotesCall[]> {
    return this.waitUntil(() => {
      const calls = this.calls.filter((call) => call.tool === tool);
      return calls.length >= count ? calls : undefined;
    });
  }

  waitForCancel(label: string): Promise<string> {
    return this.waitUntil(() => this.cancelled.find((seen) => seen === label));
  }

  /** Adds a tool on every session: the SDK then sends `notifications/tools/list_changed`. */
  addTool(name: string): void {
    for (const server of this.servers) {
      server.registerTool(name, { description: `Added while running: ${name}`, inputSchema: {} }, async () => ({
        content: [{ type: 'text', text: `${name} ran` }],
      }));
    }
  }

  override async stop(): Promise<void> {
    this.held.splice(0).forEach((release) => release());
    await Promise.all([...this.transports.values()].map((transport) => transport.close().catch(() => undefined)));
    await super.stop();
  }

  protected async handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): Promise<void> {
    const body: unknown = raw ? JSON.parse(raw) : undefined;
    const sessionId = req.headers['mcp-session-id'];
    const existing = typeof sessionId === 'string' ? this.transports.get(sessionId) : undefined;
    if (existing) return existing.handleRequest(req, res, body);
    if (req.method !== 'POST' || !isInitializeRequest(body)) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: 'unknown session' }));
      return undefined;
    }
    const transport = new StreamableHTTPServerTransport({
      sessionIdGenerator: () => randomUUID(),
      onsessioninitialized: (id) => void this.transports.set(id, transport),
    });
    const server = this.build();
    this.servers.push(server);
    await server.connect(transport);
    return transport.handleRequest(req, res, body);
  }

  private build(): McpServer {
    const server = new McpServer({ name: 'notes', version: '1.0.0' }, { capabilities: { tools: { listChanged: true } } });
    server.registerTool(
      'create_note',
      { description: 'Create a note; answers with its id.', inputSchema: { title: z.string().min(1) } },
      async ({ title }) => {
        this.record('create_note', { title });
        const id = randomUUID();
        this.notes.set(id, title);
        return { content: [{ type: 'text', text: `Created note "${title}" with id ${id}.` }] };
      },
    );
    server.registerTool(
      'get_note',
      {
        description: 'Read a note by its id.',
        inputSchema: { note_id: z.string() },
        annotations: { readOnlyHint: true, idempotentHint: true },
      },
      async ({ note_id }) => {
        this.record('get_note', { note_id });
        const title = this.notes.get(note_id);
        return title
          ? { content: [{ type: 'text', text: `Note ${note_id}: "${title}"` }] }
          : { content: [{ type: 'text', text: `No note ${note_id}` }], isError: true };
      },
    );
    server.registerTool(
      'slow_write',
      { description: 'A write that takes until it is cancelled.', inputSchema: { label: z.string() } },
      async ({ label }, extra) => {
        this.record('slow_write', { label });
        await new Promise<void>((resolve) => {
          this.held.push(resolve);
          extra.signal.addEventListener('abort', () => {
            this.cancelled.push(label);
            this.changes.emit('change');
            resolve();
          });
        });
        return { content: [{ type: 'text', text: `Wrote ${label}.` }] };
      },
    );
    return server;
  }

  private record(tool: string, args: Record<string, unknown>): void {
    this.calls.push({ tool, args });
    this.changes.emit('change');
  }

  private waitUntil<T>(found: () => T | undefined, timeoutMs = 30_000): Promise<T> {
    return new Promise((resolve, reject) => {
      const check = () => {
        const value = found();
        if (value === undefined) return;
        cleanup();
        resolve(value);
      };
      const timer = setTimeout(() => {
        cleanup();
        reject(new Error(`notes server: not seen within ${timeoutMs} ms (calls: ${JSON.stringify(this.calls)})`));
      }, timeoutMs);
      const cleanup = () => {
        clearTimeout(timer);
        this.changes.off('change', check);
      };
      this.changes.on('change', check);
      check();
    });
  }
}
