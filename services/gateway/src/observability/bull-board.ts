import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { ExpressAdapter } from '@bull-board/express';
import { Router, type RequestHandler } from 'express';
import { QUEUE_NAMES, type Runtime } from '@assistant/shared';
import { requireAdmin } from '../http/auth';

export const ADMIN_QUEUES_PATH = '/admin/queues';

/** bull-board for all five queues, behind the admin token (bearer, or basic-auth password in a browser). */
export function bullBoardRoutes(runtime: Runtime): Router {
  const adapter = new ExpressAdapter();
  adapter.setBasePath(ADMIN_QUEUES_PATH);
  createBullBoard({
    queues: QUEUE_NAMES.map((name) => new BullMQAdapter(runtime.queues[name], { readOnlyMode: false })),
    serverAdapter: adapter,
    options: { uiConfig: { boardTitle: 'Assistant queues' } },
  });
  const router = Router();
  router.use(ADMIN_QUEUES_PATH, requireAdmin(runtime.config.ADMIN_TOKEN, { basicAuth: true }), adapter.getRouter() as RequestHandler);
  return router;
}
