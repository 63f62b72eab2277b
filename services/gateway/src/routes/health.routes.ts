import { Router } from 'express';
import type { Runtime } from '@assistant/shared';

export function healthRoutes(runtime: Runtime): Router {
  const router = Router();
  router.get('/healthz', (_req, res) => {
    res.json({ status: 'ok' });
  });
  /** 200 only when PostgreSQL and Redis both answer within 1 s; otherwise 503 naming what failed. */
  router.get('/readyz', async (_req, res) => {
    try {
      await runtime.checkReady();
      res.json({ status: 'ready' });
    } catch (error) {
      res.status(503).json({ status: 'not ready', error: error instanceof Error ? error.message : String(error) });
    }
  });
  return router;
}
