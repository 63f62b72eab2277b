// First, before the rest of the process loads: how far V8 lets the heap grow (see the module).
import '@assistant/shared/heap-growth';
import { runWorkerProcess } from '@assistant/shared';
import { McpHub } from './mcp/mcp-hub';
import { createToolProcessor } from './tool.worker';

let mcp: McpHub | undefined;
runWorkerProcess(
  'tool-worker',
  (runtime) => {
    mcp = new McpHub(runtime.config.MCP_SERVERS, runtime.mcp, runtime.logger);
    mcp.start();
    return { 'tool-calls': createToolProcessor(runtime, mcp) };
  },
  {},
  async () => mcp?.close(),
);
