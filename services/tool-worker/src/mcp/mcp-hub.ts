import type { Logger, McpCatalog, McpServerConfig } from '@assistant/shared';
import { McpConnection } from './mcp-connection';

/** The tool worker's connections to every server of `MCP_SERVERS`. */
export class McpHub {
  private readonly connections: Map<string, McpConnection>;

  constructor(servers: readonly McpServerConfig[], catalog: McpCatalog, logger: Logger) {
    this.connections = new Map(servers.map((server) => [server.name, new McpConnection(server, catalog, logger)]));
  }

  /** Connects in the background: a server that is slow or down never holds up the worker. */
  start(): void {
    for (const connection of this.connections.values()) connection.start();
  }

  get(server: string): McpConnection | undefined {
    return this.connections.get(server);
  }

  async close(): Promise<void> {
    await Promise.all([...this.connections.values()].map((connection) => connection.close()));
  }
}
