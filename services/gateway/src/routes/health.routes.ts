import type { Router } from 'express';
import type { Runtime } from '@assistant/shared';
import { apiRouter } from '../http/api-router';
import { defineRoutes } from '../openapi/api-route';
import * as shape from '../openapi/api-schemas';

export const healthApi = defineRoutes({
  liveness: {
    method: 'get',
    path: '/healthz',
    tag: 'health',
    summary: 'Liveness: 200 while the process runs',
    auth: 'none',
    responses: { 200: { description: 'running', schema: shape.healthResponse } },
  },
  readiness: {
    method: 'get',
    path: '/readyz',
    tag: 'health',
    summary: 'Readiness: 200 only if Redis and PostgreSQL answer within 1 s',
    auth: 'none',
    responses: {
      200: { description: 'ready', schema: shape.healthResponse },
      503: { description: 'names what did not answer, or that the database or its migrations are missing', schema: shape.healthResponse },
    },
  },
});

export function healthRoutes(runtime: Runtime): Router {
  return apiRouter(healthApi, {
    liveness: (_req, res) => {
      res.json({ status: 'ok' });
    },
    /** 200 only when PostgreSQL and Redis both answer within 1 s; otherwise 503 naming what failed. */
    readiness: async (_req, res) => {
      try {
        await runtime.checkReady();
        res.json({ status: 'ready' });
      } catch (error) {
        res.status(503).json({ status: 'not ready', error: error instanceof Error ? error.message : String(error) });
      }
    },
  });
}
