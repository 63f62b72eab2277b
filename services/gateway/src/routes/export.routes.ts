import type { Router } from 'express';
import type { Runtime } from '@assistant/shared';
import { ClientGoneError, JsonStream } from '../export/json-stream';
import { writeUserExport } from '../export/user-export';
import { apiRouter } from '../http/api-router';
import { userOf } from '../http/auth';
import { defineRoutes } from '../openapi/api-route';
import { exportResponse } from '../openapi/operator-schemas';

export const exportApi = defineRoutes({
  exportUser: {
    method: 'get',
    path: '/v1/export',
    tag: 'users',
    summary: "Everything of the user's as one JSON document",
    auth: 'user',
    responses: { 200: { description: 'the export', schema: exportResponse } },
  },
});

/** Everything of the user's, streamed as one JSON document. */
export function exportRoutes(runtime: Runtime): Router {
  return apiRouter(exportApi, {
    exportUser: async (req, res) => {
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
    },
  });
}
