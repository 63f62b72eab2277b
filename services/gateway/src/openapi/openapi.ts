import { z } from 'zod';
import type { ApiResponseSpec, ApiRoute } from './api-route';
import { apiRoutes } from './api-routes';
import { errorResponse, namedSchemas } from './api-schemas';

type JsonSchema = Record<string, unknown>;
type JsonObject = Record<string, unknown>;

const COMPONENTS = '#/components/schemas/';
const PATH_PARAM = /:(\w+)/g;

/** `/v1/turns/:id` (express) → `/v1/turns/{id}` (OpenAPI). */
export function toOpenApiPath(expressPath: string): string {
  return expressPath.replace(PATH_PARAM, '{$1}');
}

function nameOf(schema: unknown): string | undefined {
  return Object.keys(namedSchemas).find((name) => namedSchemas[name] === schema);
}

/** JSON Schema 2020-12 (the dialect of OpenAPI 3.1) of what a schema accepts; named shapes become refs. */
function jsonSchema(schema: z.ZodType): JsonSchema {
  const name = nameOf(schema);
  if (name) return { $ref: COMPONENTS + name };
  if (schema instanceof z.ZodArray && nameOf(schema.element)) {
    return { type: 'array', items: jsonSchema(schema.element as z.ZodType) };
  }
  const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
  return rest;
}

function parameters(route: ApiRoute): JsonObject[] {
  const inPath = [...route.path.matchAll(PATH_PARAM)].map(([, name = '']) => ({
    name,
    in: 'path',
    required: true,
    schema: jsonSchema(route.params?.[name] ?? z.string()),
  }));
  const query = route.query ? (jsonSchema(route.query) as { properties?: JsonObject; required?: string[] }) : {};
  const inQuery = Object.entries(query.properties ?? {}).map(([name, schema]) => ({
    name,
    in: 'query',
    required: query.required?.includes(name) ?? false,
    schema,
  }));
  return [...inPath, ...inQuery];
}

/** The route's own answers plus the errors every route of its kind can give (docs/api.md#errors). */
function responses(route: ApiRoute): JsonObject {
  const error = (description: string): ApiResponseSpec => ({ description, schema: errorResponse });
  const all: Record<number, ApiResponseSpec> = {};
  if (route.body || route.query || route.params) all[400] = error('the request is not valid; zod issues in `error.details`');
  if (route.auth !== 'none') all[401] = error(route.auth === 'admin' ? 'admin token missing or wrong' : 'API key missing or invalid');
  if (route.params) all[404] = error("not found (another user's objects answer 404 too)");
  Object.assign(all, route.responses);
  return Object.fromEntries(
    Object.entries(all).map(([status, spec]) => [
      status,
      {
        description: spec.description,
        ...(spec.schema ? { content: { [spec.contentType ?? 'application/json']: { schema: jsonSchema(spec.schema) } } } : {}),
      },
    ]),
  );
}

function operationId(route: ApiRoute): string {
  const words = route.path.split(/[/:_-]+/).filter(Boolean);
  return route.method + words.map((word) => word[0]?.toUpperCase() + word.slice(1)).join('');
}

function operation(route: ApiRoute): JsonObject {
  const security = { user: [{ apiKey: [] }], admin: [{ adminToken: [] }], none: [] }[route.auth];
  const params = parameters(route);
  return {
    operationId: operationId(route),
    tags: [route.tag],
    summary: route.summary,
    ...(route.description ? { description: route.description } : {}),
    security,
    ...(params.length > 0 ? { parameters: params } : {}),
    ...(route.body
      ? {
          requestBody: {
            required: true,
            content: {
              'application/json': { schema: jsonSchema(route.body), ...(route.example !== undefined ? { example: route.example } : {}) },
            },
          },
        }
      : {}),
    responses: responses(route),
  };
}

/** The OpenAPI 3.1 document of the public API, built from the schemas the routes validate with. */
export function openApiDocument(routes: ApiRoute[] = apiRoutes): JsonObject {
  const paths: Record<string, JsonObject> = {};
  for (const route of routes) {
    const path = toOpenApiPath(route.path);
    paths[path] = { ...paths[path], [route.method]: operation(route) };
  }
  const components = Object.fromEntries(
    Object.entries(namedSchemas).map(([name, schema]) => {
      const { $schema: _dialect, ...rest } = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' });
      return [name, rest];
    }),
  );
  return {
    openapi: '3.1.0',
    info: {
      title: 'Personal assistant backend',
      version: '1.0.0',
      description:
        'Talk to the assistant over HTTP and watch every turn as Server-Sent Events. Errors are `{"error":{"code","message","details"?}}`. ' +
        'The web console at `/` is a client of exactly this API.',
    },
    servers: [{ url: '/' }],
    tags: [...new Set(routes.map((route) => route.tag))].map((name) => ({ name })),
    paths,
    components: {
      securitySchemes: {
        apiKey: { type: 'http', scheme: 'bearer', description: "A user's API key (POST /v1/users returns it once)" },
        adminToken: { type: 'http', scheme: 'bearer', description: 'ADMIN_TOKEN' },
      },
      schemas: components,
    },
  };
}
