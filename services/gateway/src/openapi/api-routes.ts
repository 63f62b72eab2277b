import { telegramApi } from '../channels/telegram/telegram.webhook';
import { whatsappApi } from '../channels/whatsapp/whatsapp.webhook';
import { metricsApi } from '../observability/metrics.routes';
import { adminApi } from '../routes/admin.routes';
import { apiKeyApi } from '../routes/api-keys.routes';
import { approvalApi } from '../routes/approvals.routes';
import { exportApi } from '../routes/export.routes';
import { gotchaApi } from '../routes/gotchas.routes';
import { healthApi } from '../routes/health.routes';
import { linkCodeApi } from '../routes/link-codes.routes';
import { messageApi } from '../routes/messages.routes';
import { preferenceApi } from '../routes/preferences.routes';
import { profileApi } from '../routes/profile.routes';
import { sessionApi } from '../routes/sessions.routes';
import { toolApi } from '../routes/tools.routes';
import { turnApi } from '../routes/turns.routes';
import { usageApi } from '../routes/usage.routes';
import { userApi } from '../routes/users.routes';
import { eventStreamApi } from '../sse/sse.routes';
import type { ApiRoute, ApiRoutes } from './api-route';

/**
 * Every route the gateway serves, for /openapi.json, in the order the document lists them. Each
 * group is the one its router is built from (`apiRouter`); a /v1 group left out of this list fails
 * tests/openapi.e2e.test.ts. The channel webhooks are described even while their channel is off.
 */
export const apiRoutes: ApiRoute[] = [
  healthApi,
  metricsApi,
  telegramApi,
  whatsappApi,
  userApi,
  preferenceApi,
  profileApi,
  gotchaApi,
  toolApi,
  linkCodeApi,
  messageApi,
  turnApi,
  eventStreamApi,
  approvalApi,
  sessionApi,
  usageApi,
  apiKeyApi,
  exportApi,
  adminApi,
].flatMap((group: ApiRoutes) => Object.values(group));
