import path from 'node:path';
import { Router } from 'express';
import { WEB_ROOT } from '../console/console.routes';
import { openApiDocument } from './openapi';

/** Swagger UI comes from the swagger-ui-dist package in node_modules: the docs work offline. */
const SWAGGER_UI = path.dirname(require.resolve('swagger-ui-dist/package.json'));
// Only what docs.html loads; the package's own index.html points at a remote example API.
const SWAGGER_FILES = new Set(['swagger-ui.css', 'swagger-ui-bundle.js', 'favicon-32x32.png']);
const DOCS_POLICY = "default-src 'self'; img-src 'self' data:; style-src 'self' 'unsafe-inline'; connect-src 'self'";

/** GET /openapi.json and the readable docs at /docs (public, like the console). */
export function openApiRoutes(): Router {
  const router = Router();
  let document: object | undefined;

  router.get('/openapi.json', (_req, res) => {
    document ??= openApiDocument();
    res.json(document);
  });

  router.get(['/docs', '/docs/'], (_req, res) => {
    res.set('Content-Security-Policy', DOCS_POLICY).sendFile(path.join(WEB_ROOT, 'public', 'docs.html'));
  });

  router.get('/docs/:file', (req, res, next) => {
    if (!SWAGGER_FILES.has(req.params.file)) return next();
    return res.sendFile(path.join(SWAGGER_UI, req.params.file), { maxAge: '1d' });
  });

  return router;
}
