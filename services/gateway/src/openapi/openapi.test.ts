import { apiRoutes } from './api-routes';
import { openApiDocument, toOpenApiPath } from './openapi';

describe('the OpenAPI document', () => {
  const document = openApiDocument() as {
    openapi: string;
    paths: Record<string, Record<string, { parameters?: { name: string; in: string }[] }>>;
    components: { schemas: Record<string, unknown> };
  };

  it('is OpenAPI 3.1 with one operation per described route', () => {
    expect(document.openapi).toBe('3.1.0');
    const operations = Object.values(document.paths).flatMap((operations) => Object.keys(operations));
    expect(operations).toHaveLength(apiRoutes.length);
  });

  it('describes each route once', () => {
    const keys = apiRoutes.map((route) => `${route.method} ${route.path}`);
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('gives every path parameter the schema the route parses it with', () => {
    for (const route of apiRoutes) {
      const names = [...route.path.matchAll(/:(\w+)/g)].map((match) => match[1]);
      expect([route.path, Object.keys(route.params ?? {})]).toEqual([route.path, names]);
      const declared = document.paths[toOpenApiPath(route.path)]?.[route.method]?.parameters ?? [];
      expect(declared.filter((p) => p.in === 'path').map((p) => p.name)).toEqual(names);
    }
  });

  it('has examples that the routes accept', () => {
    const withExamples = apiRoutes.filter((route) => route.example !== undefined);
    expect(withExamples.map((route) => `${route.method} ${route.path}`)).toContain('post /v1/messages');
    for (const route of withExamples) expect([route.path, route.body?.safeParse(route.example).success]).toEqual([route.path, true]);
  });

  it('only refers to components it defines', () => {
    const refs = [...JSON.stringify(document).matchAll(/"\$ref":"#\/components\/schemas\/(\w+)"/g)].map((match) => match[1]);
    expect(refs.length).toBeGreaterThan(0);
    for (const name of refs) expect(Object.keys(document.components.schemas)).toContain(name);
    expect(JSON.stringify(document)).not.toContain('$defs');
  });
});
