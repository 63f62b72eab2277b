import { Router, type Request, type RequestHandler, type Response } from 'express';
import type { z } from 'zod';
import type { ApiRoute, ApiRoutes } from '../openapi/api-route';
import { notFound } from './errors';
import { parse } from './validate';

type Parsed<S> = S extends z.ZodType ? z.output<S> : undefined;

/** The request parts of a route, parsed with the schemas it declares. */
export interface RouteInput<R extends ApiRoute> {
  params: R extends { params: infer P extends Record<string, z.ZodType> } ? { [K in keyof P]: z.output<P[K]> } : Record<string, unknown>;
  query: R extends { query: infer Q } ? Parsed<Q> : undefined;
  body: R extends { body: infer B } ? Parsed<B> : undefined;
}

export type RouteHandler<R extends ApiRoute> = (req: Request, res: Response, input: RouteInput<R>) => unknown;

/** A handler, or one with middleware that runs before its input is parsed (rate limits, body readers, secrets). */
export type RouteImplementation<R extends ApiRoute> = RouteHandler<R> | { use: RequestHandler[]; handle: RouteHandler<R> };

/** One implementation per route: a route without a handler, or a handler without a route, does not compile. */
export type RouteImplementations<Routes extends ApiRoutes> = { [K in keyof Routes]: RouteImplementation<Routes[K]> };

/** Path parameters one by one, so a failure's `details` name the value as they always have. */
function parseParams(route: ApiRoute, params: Request['params']): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(route.params ?? {}).map(([name, schema]) => {
      const value: unknown = params[name];
      if (route.notFound === undefined) return [name, parse(schema, value)];
      const result = schema.safeParse(value);
      if (!result.success) throw notFound(route.notFound);
      return [name, result.data];
    }),
  );
}

/** What `inputOf` returns before the route's own types are put back on it. */
interface ParsedInput {
  params: Record<string, unknown>;
  query: unknown;
  body: unknown;
}

/** Parameters, then query, then body: the order decides which 400 or 404 a bad request gets. */
function inputOf(route: ApiRoute, req: Request): ParsedInput {
  if (route.parsesOwnInput) return { params: {}, query: undefined, body: undefined };
  return {
    params: parseParams(route, req.params),
    query: route.query ? parse(route.query, req.query) : undefined,
    body: route.body ? parse(route.body, req.body) : undefined,
  };
}

/** An Express router serving exactly the given routes, each with its implementation. */
export function apiRouter<Routes extends ApiRoutes>(routes: Routes, implementations: RouteImplementations<Routes>): Router {
  const router = Router();
  for (const [name, route] of Object.entries(routes)) {
    const implementation = implementations[name] as RouteImplementation<ApiRoute> | undefined;
    // The types already demand one; this catches a caller that got around them.
    if (!implementation) throw new Error(`no handler for the route ${name} (${route.method.toUpperCase()} ${route.path})`);
    const { use, handle } = typeof implementation === 'function' ? { use: [], handle: implementation } : implementation;
    router[route.method](route.path, ...use, (req: Request, res: Response) =>
      handle(req, res, inputOf(route, req) as RouteInput<ApiRoute>),
    );
  }
  return router;
}
