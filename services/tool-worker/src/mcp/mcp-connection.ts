import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { getDefaultEnvironment, StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { StreamableHTTPError } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ErrorCode, McpError, ToolSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { setTimeout as sleep } from 'node:timers/promises';
import { isStdioServer, stripUuids, type Logger, type McpCatalog, type McpServerConfig } from '@assistant/shared';
import { boundedFetch } from './mcp-bounded-fetch';
import { toMcpTool, type McpTool } from './mcp-schemas';

/** Reconnection backoff: 0.5 s doubling up to 30 s, so a server that is down costs little. */
const BACKOFF_FIRST_MS = 500;
const BACKOFF_MAX_MS = 30_000;
const CONNECT_TIMEOUT_MS = 15_000;
const LIST_TIMEOUT_MS = 15_000;
const MAX_TOOL_PAGES = 20;

/** A call that never reached an answer because the connection itself failed (not the tool). */
export class McpUnavailableError extends Error {}

/**
 * One MCP server, kept connected by the tool worker: it connects in the background (start-up never
 * waits for it), lists the tools again on `notifications/tools/list_changed`, publishes what it
 * knows to the catalog, and after a failure reconnects with backoff, or at once when a call
 * needs it (`ready`).
 */
export class McpConnection {
  private client?: Client;
  private tools = new Map<string, McpTool>();
  private failures = 0;
  private lastError = 'not connected yet';
  private timer?: NodeJS.Timeout;
  private closed = false;
  /** Why each dropped client was dropped: a call failing under it reports that, not "Connection closed". */
  private readonly dropped = new WeakMap<Client, string>();
  /** The connection attempt under way, if any: every caller waits for the same one. */
  private connecting?: Promise<void>;

  constructor(
    readonly config: McpServerConfig,
    private readonly catalog: McpCatalog,
    private readonly logger: Logger,
  ) {}

  get name(): string {
    return this.config.name;
  }

  get connected(): boolean {
    return this.client !== undefined;
  }

  start(): void {
    void this.reconnect();
  }

  /**
   * Resolves once connected, or once `timeoutMs` have passed: a reconnect still waiting out its
   * backoff starts now, so a call right after a server restarted (or a worker started) does
   * not fail needlessly, and one to a server that never answers waits no longer than its tool.
   */
  async ready(timeoutMs: number): Promise<void> {
    if (this.client || this.closed) return;
    const waited = new AbortController();
    await Promise.race([this.reconnect(), sleep(timeoutMs, undefined, { signal: waited.signal }).catch(() => undefined)]);
    waited.abort();
  }

  /** The live tool, or undefined; `problem` says why a known server cannot take calls now. */
  find(tool: string): { tool?: McpTool; problem?: string } {
    if (!this.client) return { problem: `The MCP server "${this.name}" is not available right now (${this.lastError}).` };
    const found = this.tools.get(tool);
    return found ? { tool: found } : { problem: `The MCP server "${this.name}" has no tool named "${tool}".` };
  }

  /**
   * Calls a tool; the signal cancels the request on the server too (MCP `notifications/cancelled`).
   * A Streamable HTTP server that no longer knows our session (it restarted) refuses the request
   * without running anything: 404 as the specification says, 400 from servers built on the SDK's
   * examples. The call is then sent once more on a new session, whatever the tool.
   */
  async call(tool: string, args: Record<string, unknown>, signal: AbortSignal, timeoutMs: number): Promise<CallToolResult> {
    for (let sent = 1; ; sent++) {
      const client = this.client;
      if (!client) throw new McpUnavailableError(`the MCP server "${this.name}" is not connected (${this.lastError})`);
      try {
        // The SDK's own timeout is a backstop; ours (the signal) fires first and is the one reported.
        return (await client.callTool({ name: tool, arguments: args }, undefined, {
          signal,
          timeout: timeoutMs + 5_000,
        })) as CallToolResult;
      } catch (error) {
        if (signal.aborted || (error instanceof McpError && error.code !== ErrorCode.ConnectionClosed)) throw error;
        // Anything else is the connection failing under us: start over with a fresh one.
        this.lost(client, error);
        if (sent > 1 || !(error instanceof StreamableHTTPError && (error.code === 404 || error.code === 400))) {
          throw new McpUnavailableError(
            `the connection to the MCP server "${this.name}" failed: ${this.dropped.get(client) ?? describe(error)}`,
          );
        }
        await this.ready(timeoutMs);
      }
    }
  }

  async close(): Promise<void> {
    this.closed = true;
    clearTimeout(this.timer);
    const client = this.client;
    this.client = undefined;
    await client?.close().catch(() => undefined);
  }

  /** Connects now, unless an attempt is already under way: then answers that one. */
  private reconnect(): Promise<void> {
    clearTimeout(this.timer);
    this.connecting ??= this.connect().finally(() => (this.connecting = undefined));
    return this.connecting;
  }

  private async connect(): Promise<void> {
    if (this.closed) return;
    const client = new Client(
      { name: 'assistant-tool-worker', version: '1.0.0' },
      {
        capabilities: {},
        listChanged: {
          tools: { autoRefresh: false, onChanged: () => void this.refresh(client).catch((error: unknown) => this.lost(client, error)) },
        },
      },
    );
    client.onclose = () => this.lost(client, new Error('the connection closed'));
    client.onerror = (error) => this.logger.debug({ server: this.name, err: error }, 'mcp transport error');
    try {
      await client.connect(this.transport(client), { timeout: CONNECT_TIMEOUT_MS });
      // Shut down while connecting: this client must not outlive the worker (nor its stdio server).
      if (this.closed) return void (await client.close());
      this.client = client;
      await this.refresh(client);
      this.failures = 0;
      this.logger.info({ server: this.name, tools: this.tools.size }, 'mcp server connected');
    } catch (error) {
      this.logger.warn({ server: this.name, problem: describe(error) }, 'mcp server unavailable');
      this.lost(client, error);
      await client.close().catch(() => undefined);
    }
  }

  private transport(client: Client) {
    const { config } = this;
    if (isStdioServer(config)) {
      const transport = new StdioClientTransport({
        command: config.command,
        args: config.args ?? [],
        env: { ...getDefaultEnvironment(), ...config.env },
        stderr: 'pipe',
      });
      // Drained so a chatty server never blocks on a full pipe; kept at debug level.
      transport.stderr?.on('data', (chunk: Buffer) =>
        this.logger.debug({ server: this.name, stderr: chunk.toString('utf8').slice(0, 2_000) }, 'mcp server stderr'),
      );
      return transport;
    }
    return new StreamableHTTPClientTransport(new URL(config.url), {
      requestInit: { headers: config.headers ?? {} },
      fetch: boundedFetch((error) => this.lost(client, error)),
    });
  }

  private async refresh(client: Client): Promise<void> {
    const listed: unknown[] = [];
    let cursor: string | undefined;
    for (let page = 0; page < MAX_TOOL_PAGES; page++) {
      // Each tool is checked on its own below: the SDK's listTools() refuses the whole list for
      // one tool out of shape (an inputSchema without "type": "object"), losing the server.
      const result = await client.request({ method: 'tools/list', params: cursor ? { cursor } : {} }, TOOL_PAGE, {
        timeout: LIST_TIMEOUT_MS,
      });
      listed.push(...result.tools);
      cursor = result.nextCursor;
      if (!cursor) break;
    }
    if (client !== this.client) return;
    const tools = new Map<string, McpTool>();
    for (const raw of listed) {
      const parsed = ToolSchema.safeParse(raw);
      const { tool: usable, problem } = parsed.success ? toMcpTool(this.name, parsed.data) : { problem: notATool(raw, parsed.error) };
      if (usable) tools.set(usable.entry.tool, usable);
      else this.logger.warn({ server: this.name, problem }, 'mcp tool left out');
    }
    this.tools = tools;
    await this.publish('up');
    // A model takes at most MAX_MODEL_TOOLS tools in a request: an operator must learn which are not offered.
    const leftOut = await this.catalog.leftOut();
    if (leftOut.length > 0) this.logger.warn({ server: this.name, leftOut }, 'mcp tools past the model limit are not offered');
  }

  /** Marks the server down (its last known tools stay listed, failing clearly) and schedules a reconnect. */
  private lost(client: Client, error: unknown): void {
    // onclose often follows the failure that caused it, and an old client may close after a new one connected.
    if (this.closed || this.dropped.has(client)) return;
    const reason = describe(error);
    this.dropped.set(client, reason);
    if (this.client !== undefined && this.client !== client) return;
    this.client = undefined;
    this.lastError = reason;
    void this.publish('down').catch((problem: unknown) => this.logger.warn({ server: this.name, err: problem }, 'mcp catalog not updated'));
    void client.close().catch(() => undefined);
    clearTimeout(this.timer);
    const delay = Math.min(BACKOFF_MAX_MS, BACKOFF_FIRST_MS * 2 ** this.failures);
    this.failures += 1;
    this.timer = setTimeout(() => void this.reconnect(), delay);
    this.timer.unref();
  }

  private async publish(status: 'up' | 'down'): Promise<void> {
    const previous = (await this.catalog.states()).find((state) => state.server === this.name);
    const tools = status === 'up' || this.tools.size > 0 ? [...this.tools.values()].map((tool) => tool.entry) : (previous?.tools ?? []);
    await this.catalog.publish({
      server: this.name,
      status,
      ...(status === 'down' ? { error: this.lastError } : {}),
      tools,
      updatedAt: new Date().toISOString(),
    });
  }
}

/** One page of `tools/list`, its tools not yet checked. */
const TOOL_PAGE = z.looseObject({ tools: z.array(z.unknown()), nextCursor: z.string().optional() });

function notATool(raw: unknown, error: z.ZodError): string {
  const name = z.object({ name: z.string() }).safeParse(raw);
  const issue = error.issues[0];
  const where = issue?.path.join('.') || 'tool';
  return `tool ${name.success ? name.data.name : '(unnamed)'} is not an MCP tool definition: ${where}: ${issue?.message ?? 'invalid'}`;
}

/** A short, secret-free description of a connection problem (no stack, no UUIDs such as session ids). */
function describe(error: unknown): string {
  const text = error instanceof Error ? (firstIssue(error) ?? error.message) : String(error);
  return stripUuids(text.split('\n')[0] ?? text).slice(0, 300);
}

/** The SDK's check of a server's answer fails with the issues as JSON, whose first line is "[": its first issue instead. */
function firstIssue(error: Error): string | undefined {
  const { issues } = error as { issues?: unknown };
  if (!Array.isArray(issues) || issues.length === 0) return undefined;
  const { path, message } = issues[0] as { path?: unknown[]; message?: string };
  return `its answer is not valid MCP: ${path?.join('.') || 'answer'}: ${message ?? 'invalid'}`;
}
