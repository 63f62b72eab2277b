import { Router } from 'express';
import type { Runtime } from '@assistant/shared';
import { ClientGoneError, JsonStream } from '../export/json-stream';
import { writeUserExport } from '../export/user-export';
import { userOf } from '../http/auth';

/** CONTRACT §3 GET /v1/export: everything of the user's, streamed as one JSON document. */
export function exportRoutes(runtime: Runtime): Router {
  const router = Router();

  router.get('/v1/export', async (req, res) => {
    const userId = userOf(req);
    res.status(200).set({
      'content-type': 'application/json; charset=utf-8',
      'content-disposition': `attachment; filename="assistant-export-${new Date().toISOString().slice(0, 10)}.json"`,
      'cache-control': 'no-store',
    });
    try {
      await writeUserExport(runtime.db, userId, new JsonStream(res));
      res.end();
    } catch (error) {
      if (error instanceof ClientGoneError) return;
      // Headers are gone: the error handler can only cut the document short, which a JSON parser notices.
      throw error;
    }
  });

  return router;
}
