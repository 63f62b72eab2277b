import type { z } from 'zod';
import { errorResponse } from './api-schemas';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ApiResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** application/json unless said otherwise. */
  contentType?: string;
}

/**
 * One route of the API: the Express route (`apiRouter`) and its OpenAPI entry are both built
 * from it, and its handler gets the request parts parsed with its schemas.
 */
export interface ApiRoute {
  method: HttpMethod;
  /** Express syntax: `/v1/turns/:id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /**
   * For the document only: keys are checked where app.ts mounts the routers (so an unknown path
   * under /v1 asks for a key before it answers 404) or by the route's own middleware. `none`:
   * public, or verified by the route itself (webhook secrets and signatures).
   */
  auth: 'user' | 'admin' | 'none';
  params?: Record<string, z.ZodType>;
  /**
   * What the path's id names: a path parameter that does not parse answers 404 `<notFound> not
   * found`, like an unknown id, instead of 400.
   */
  notFound?: string;
  query?: z.ZodObject;
  body?: z.ZodType;
  /**
   * The handler reads the request itself, with the schemas above: a webhook checks its signature
   * over the raw body, or its secret, before anything is parsed.
   */
  parsesOwnInput?: true;
  /** A request body that the route accepts, shown in the docs and tried by the tests. */
  example?: unknown;
  responses: Record<number, ApiResponseSpec>;
}

/** Routes by name; the names tie each route to its handler in `apiRouter`. */
export type ApiRoutes = Record<string, ApiRoute>;

/** Keeps the literal types of the schemas, so each handler gets its input typed. */
export const defineRoutes = <const Routes extends ApiRoutes>(routes: Routes): Routes => routes;

/** An error answer, `{"error":{"code","message","details"?}}`. */
export const failure = (description: string): ApiResponseSpec => ({ description, schema: errorResponse });
