import express from 'express';
import type { Runtime } from '@assistant/shared';
import { channelRoutes } from './channels/channel.routes';
import { consoleRoutes } from './console/console.routes';
import { requireUser } from './http/auth';
import { KeyUsageRecorder } from './http/key-usage';
import { errorHandler, notFoundRoute } from './http/errors';
import { rejectUnstorableInput } from './http/input-guard';
import { acceptUtf8Aliases } from './http/utf8-aliases';
import { bullBoardRoutes } from './observability/bull-board';
import { createGatewayMetrics } from './observability/metrics.routes';
import { openApiRoutes } from './openapi/openapi.routes';
import { adminRoutes } from './routes/admin.routes';
import { apiKeyRoutes } from './routes/api-keys.routes';
import { approvalRoutes } from './routes/approvals.routes';
import { exportRoutes } from './routes/export.routes';
import { gotchaRoutes } from './routes/gotchas.routes';
import { healthRoutes } from './routes/health.routes';
import { linkCodeRoutes } from './routes/link-codes.routes';
import { messageRoutes } from './routes/messages.routes';
import { preferenceRoutes } from './routes/preferences.routes';
import { profileRoutes } from './routes/profile.routes';
import { sessionRoutes } from './routes/sessions.routes';
import { toolRoutes } from './routes/tools.routes';
import { turnRoutes } from './routes/turns.routes';
import { usageRoutes } from './routes/usage.routes';
import { userRoutes } from './routes/users.routes';
import type { EventHub } from './sse/event-hub';
import { openStreams, sseRoutes } from './sse/sse.routes';
import { ApiKeyOwners } from './users/api-key-owners';

export const BODY_LIMIT = '1mb';

export interface AppDeps {
  runtime: Runtime;
  hub: EventHub;
  heartbeatMs: number;
  /** Keeps keys' owners while it listens for changes (main.ts); without one, every request reads its key's owner. */
  keyOwners?: ApiKeyOwners;
}

export function createApp({ runtime, hub, heartbeatMs, keyOwners = ApiKeyOwners.of(runtime) }: AppDeps): express.Express {
  const app = express();
  app.disable('x-powered-by');
  app.set('trust proxy', true);
  const metrics = createGatewayMetrics(runtime, () => openStreams.size);
  app.use(metrics.track);
  app.use(healthRoutes(runtime));
  app.use(metrics.router);
  app.use(bullBoardRoutes(runtime));
  // Channel webhooks come before the JSON parser: WhatsApp's signature is over the raw body.
  app.use(channelRoutes(runtime));
  // Bodies are JSON whatever their content type says: a client that forgets the header (fetch
  // defaults to text/plain) gets its JSON read, not silently ignored.
  app.use(acceptUtf8Aliases, express.json({ limit: BODY_LIMIT, type: () => true }));
  app.use(rejectUnstorableInput);

  const authenticate = requireUser(keyOwners, new KeyUsageRecorder(runtime.db, runtime.logger));
  app.use(userRoutes(runtime, authenticate, keyOwners));
  // Admin routes take the admin token, not a user's key: mounted before /v1's user auth.
  app.use(adminRoutes(runtime, keyOwners));
  app.use('/v1', authenticate);
  app.use(messageRoutes(runtime));
  app.use(sseRoutes(runtime, hub, heartbeatMs));
  app.use(turnRoutes(runtime));
  app.use(approvalRoutes(runtime));
  app.use(preferenceRoutes(runtime));
  app.use(sessionRoutes(runtime));
  app.use(profileRoutes(runtime));
  app.use(gotchaRoutes(runtime));
  app.use(toolRoutes(runtime));
  app.use(linkCodeRoutes(runtime));
  app.use(apiKeyRoutes(runtime, keyOwners));
  app.use(usageRoutes(runtime));
  app.use(exportRoutes(runtime));

  // Public: the API's description and the web console (it signs in with an API key like any client).
  app.use(openApiRoutes());
  app.use(consoleRoutes());
  app.use(notFoundRoute);
  app.use(errorHandler(runtime.logger));
  return app;
}
