import { Router } from 'express';
import { offeredTools, type Runtime } from '@assistant/shared';

/**
 * CONTRACT §10: every tool the model is offered, built-in and MCP alike, read from the same
 * registry the agent worker builds the model's tools from (the MCP part from the tool worker's
 * catalog in Redis, so the gateway never connects to an MCP server itself).
 */
export function toolRoutes(runtime: Runtime): Router {
  const router = Router();
  router.get('/v1/tools', async (_req, res) => {
    res.json(offeredTools(await runtime.mcp.tools()));
  });
  return router;
}
