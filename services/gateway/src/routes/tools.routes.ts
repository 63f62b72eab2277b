import type { Router } from 'express';
import { z } from 'zod';
import { offeredTools, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

export const toolApi = defineRoutes({
  listTools: {
    method: 'get',
    path: '/v1/tools',
    tag: 'tools',
    summary: 'Every tool the model is offered: built-in ones first, then those of MCP servers',
    auth: 'user',
    responses: { 200: { description: 'the tools, in the order the model gets them', schema: z.array(shape.toolResponse) } },
  },
});

/**
 * Every tool the model is offered, built-in and MCP alike, read from the same
 * registry the agent worker builds the model's tools from (the MCP part from the tool worker's
 * catalog in Redis, so the gateway never connects to an MCP server itself).
 */
export function toolRoutes(runtime: Runtime): Router {
  return apiRouter(toolApi, {
    listTools: async (_req, res) => {
      res.json(offeredTools(await runtime.mcp.tools()));
    },
  });
}
