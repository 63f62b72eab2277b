import type { z } from 'zod';
import { errorResponse } from './api-schemas';

export type HttpMethod = 'get' | 'post' | 'put' | 'patch' | 'delete';

export interface ApiResponseSpec {
  description: string;
  schema?: z.ZodType;
  /** application/json unless said otherwise. */
  contentType?: string;
}

/** One route of the public API, described with the schemas its handler parses with. */
export interface ApiRoute {
  method: HttpMethod;
  /** Express syntax, exactly as the router declares it: `/v1/turns/:id`. */
  path: string;
  tag: string;
  summary: string;
  description?: string;
  /** `none`: public, or verified by the route itself (webhook secrets and signatures). */
  auth: 'user' | 'admin' | 'none';
  params?: Record<string, z.ZodType>;
  query?: z.ZodObject;
  body?: z.ZodType;
  /** A request body that the route accepts, shown in the docs and tried by the tests. */
  example?: unknown;
  responses: Record<number, ApiResponseSpec>;
}

/** An error answer, `{"error":{"code","message","details"?}}`. */
export const failure = (description: string): ApiResponseSpec => ({ description, schema: errorResponse });
