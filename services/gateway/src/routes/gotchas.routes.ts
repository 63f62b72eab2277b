import type { Router } from 'express';
import { z } from 'zod';
import { addManualGotcha, isToolName, listGotchas, mcpServerOf, type Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { HttpError } from '../http/errors';
import { rateLimit } from '../http/rate-limit';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

export const postGotchaBody = z.strictObject({
  // A built-in tool, or `<server>__<tool>` (checked against the configured servers below).
  tool_name: z
    .string()
    .refine((name) => isToolName(name) || mcpServerOf(name) !== undefined, 'must be the name of a tool')
    .optional(),
  description: z.string().trim().min(1, 'must not be blank').max(2_000),
});

/** Manual gotchas a user may add per window: each one is stored and may reach later prompts. */
export const GOTCHAS_PER_WINDOW = 30;
const WINDOW_MS = 10 * 60_000;

export const gotchaApi = defineRoutes({
  listGotchas: {
    method: 'get',
    path: '/v1/gotchas',
    tag: 'gotchas',
    summary: 'Lessons about tools: captured from repeated tool errors, or added by hand',
    auth: 'user',
    responses: { 200: { description: 'most recently seen first', schema: z.array(shape.gotchaResponse) } },
  },
  addGotcha: {
    method: 'post',
    path: '/v1/gotchas',
    tag: 'gotchas',
    summary: 'Add a gotcha by hand',
    auth: 'user',
    body: postGotchaBody,
    example: { tool_name: 'create_document', description: 'Always put new documents in a folder the user named.' },
    responses: { 201: { description: 'the gotcha', schema: shape.gotchaResponse } },
  },
});

/** Gotchas (docs/memory.md#gotchas): the ones captured from repeated tool errors and the ones added by hand. */
export function gotchaRoutes(runtime: Runtime): Router {
  const { db } = runtime;
  const servers = runtime.config.MCP_SERVERS.map((server) => server.name);
  const limit = rateLimit(runtime.redis, runtime.config.QUEUE_PREFIX, 'gotchas', GOTCHAS_PER_WINDOW, WINDOW_MS, 'gotchas');
  return apiRouter(gotchaApi, {
    listGotchas: async (req, res) => {
      res.json(await listGotchas(db, userOf(req)));
    },
    addGotcha: async (req, res, { body }) => {
      const server = body.tool_name === undefined || isToolName(body.tool_name) ? undefined : mcpServerOf(body.tool_name);
      if (server !== undefined && !servers.includes(server)) {
        const message = `no MCP server named "${server}" is configured`;
        throw new HttpError(400, 'validation_failed', 'the request is not valid', [{ code: 'custom', path: ['tool_name'], message }]);
      }
      await limit(req);
      res.status(201).json(await addManualGotcha(db, userOf(req), body));
    },
  });
}
