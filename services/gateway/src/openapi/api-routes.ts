import type { ApiRoute } from './api-route';
import { accountApiRoutes } from './account.api-routes';
import { operatorApiRoutes } from './operator.api-routes';
import { publicApiRoutes } from './public.api-routes';
import { turnApiRoutes } from './turn.api-routes';

/**
 * Every route the gateway serves, for /openapi.json. A route under /v1 without an entry here
 * fails tests/openapi.e2e.test.ts, which compares this list with the express router.
 */
export const apiRoutes: ApiRoute[] = [...publicApiRoutes, ...accountApiRoutes, ...turnApiRoutes, ...operatorApiRoutes];
