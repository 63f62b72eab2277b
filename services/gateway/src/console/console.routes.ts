import path from 'node:path';
import express, { Router } from 'express';

/** services/gateway/web: the console's HTML and CSS (public/) and its compiled TypeScript (dist/js/). */
export const WEB_ROOT = path.resolve(__dirname, '../../web');

// The console talks only to this gateway; the policy makes the browser refuse anything else.
const CONSOLE_POLICY = "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'";

/** The web console at `/`: static files, public; it signs in with an API key like any client. */
export function consoleRoutes(): Router {
  const router = Router();
  const policy = (res: express.Response) => res.set('Content-Security-Policy', CONSOLE_POLICY);
  router.use(express.static(path.join(WEB_ROOT, 'public'), { setHeaders: policy }));
  router.use('/js', express.static(path.join(WEB_ROOT, 'dist', 'js'), { setHeaders: policy }));
  return router;
}
