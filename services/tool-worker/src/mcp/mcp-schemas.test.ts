import { acceptedArguments, schemaProblems, toMcpTool } from './mcp-schemas';

describe('toMcpTool', () => {
  it('names the tool <server>__<tool>, keeps its schema and reads its annotations', () => {
    const { tool } = toMcpTool('files', {
      name: 'write',
      description: 'Write a file 123e4567-e89b-12d3-a456-426614174000.',
      inputSchema: {
        $schema: 'http://json-schema.org/draft-07/schema#',
        type: 'object',
        properties: { path: { type: 'string' } },
        required: ['path'],
      },
      annotations: { readOnlyHint: false, idempotentHint: true },
    });
    expect(tool?.entry).toEqual({
      name: 'files__write',
      server: 'files',
      tool: 'write',
      description: 'Write a file [hidden id].',
      parameters: { type: 'object', properties: { path: { type: 'string' } }, required: ['path'] },
      readOnly: false,
      idempotent: true,
    });
    expect(tool?.validate({ path: 'a.txt' })).toBe(true);
    expect(tool?.validate({ path: 3 })).toBe(false);
    expect(schemaProblems(tool?.validate as never)).toBe('path: must be string');
    expect(tool?.validate({})).toBe(false);
    expect(schemaProblems(tool?.validate as never)).toBe("arguments: must have required property 'path'");
  });

  it('compiles a schema listed again only once, as ajv keeps every schema it compiles: relisting on each reconnect grew the worker without end', () => {
    const listed = () => toMcpTool('docs', { name: 'search', inputSchema: { type: 'object', properties: { q: { type: 'string' } } } });
    const first = listed().tool?.validate;
    expect(first).toBeDefined();
    expect(listed().tool?.validate).toBe(first);
    const other = toMcpTool('docs', { name: 'search', inputSchema: { type: 'object', properties: { q: { type: 'number' } } } });
    expect(other.tool?.validate({ q: 'text' })).toBe(false);
  });

  it('takes a schema that says it is draft-07 by the rules of draft-07, as a tuple written `items: [...]`', () => {
    const point = { type: 'array', items: [{ type: 'number' }, { type: 'number' }], minItems: 2, maxItems: 2 };
    const draft07 = { $schema: 'http://json-schema.org/draft-07/schema#', type: 'object' as const, properties: { point } };
    const { tool } = toMcpTool('maps', { name: 'pin', inputSchema: draft07 });
    expect(tool?.entry.parameters).toEqual({ type: 'object', properties: { point } });
    expect(tool?.validate({ point: [1, 2] })).toBe(true);
    expect(tool?.validate({ point: [1, 'north'] })).toBe(false);
    expect(schemaProblems(tool?.validate as never)).toBe('point.1: must be number');
  });

  it('shortens a description past 1,024 characters, and leaves out a tool whose schema is over 32 KB', () => {
    const long = toMcpTool('docs', { name: 'search', description: 'Searches the docs. '.repeat(100), inputSchema: { type: 'object' } });
    expect(long.tool?.entry.description.length).toBeLessThanOrEqual(1_024);
    expect(long.tool?.entry.description).toMatch(/^Searches the docs\. .* the\.\.\.$/);
    const properties = Object.fromEntries(Array.from({ length: 2_000 }, (_, i) => [`field_${i}`, { type: 'string' }]));
    const huge = toMcpTool('docs', { name: 'fill', inputSchema: { type: 'object', properties } });
    expect(huge).toEqual({ problem: 'tool docs__fill has an input schema over 32768 characters' });
  });

  it('treats missing annotations as neither read-only nor idempotent', () => {
    const { tool } = toMcpTool('files', { name: 'touch', inputSchema: { type: 'object' } });
    expect(tool?.entry).toMatchObject({ readOnly: false, idempotent: false, description: 'touch' });
  });

  it('takes a schema with an `$id` each time the tools are listed, and from every server', () => {
    const withId = () => ({ $id: 'https://example.com/args.json', type: 'object' as const, properties: { a: { type: 'string' } } });
    for (const server of ['files', 'files', 'notes']) {
      const { tool, problem } = toMcpTool(server, { name: 'write', inputSchema: withId() });
      expect(problem).toBeUndefined();
      expect(tool?.validate({ a: 1 })).toBe(false);
    }
  });

  it('takes a schema that refers to itself, as a tree of nodes does', () => {
    const node = { type: 'object', properties: { name: { type: 'string' }, children: { type: 'array', items: { $ref: '#' } } } };
    const { tool, problem } = toMcpTool('outline', { name: 'add_tree', inputSchema: node as never });
    expect(problem).toBeUndefined();
    expect(tool?.entry.parameters).toEqual(node);
    expect(tool?.validate({ name: 'a', children: [{ name: 'b', children: [] }] })).toBe(true);
    expect(tool?.validate({ name: 'a', children: [{ name: 3 }] })).toBe(false);
    expect(schemaProblems(tool?.validate as never)).toBe('children.0.name: must be string');
  });

  it('checks patterns with RE2: as JavaScript does, and one RE2 cannot run checks nothing', () => {
    const { tool } = toMcpTool('files', {
      name: 'tag',
      inputSchema: {
        type: 'object',
        properties: { code: { type: 'string', pattern: '^[A-Z]{3}$' }, free: { type: 'string', pattern: '^(?!-)' } },
        patternProperties: { '^x-': { type: 'number' } },
      },
    });
    const validate = tool?.validate as NonNullable<typeof tool>['validate'];
    expect(validate({ code: 'ABC', 'x-size': 3 })).toBe(true);
    expect(validate({ code: 'ABCD' })).toBe(false);
    expect(schemaProblems(validate)).toBe('code: must match pattern "^[A-Z]{3}$"');
    expect(validate({ 'x-size': 'big' })).toBe(false);
    expect(validate({ free: '-anything' })).toBe(true);
  });

  it('leaves out a tool the model could not call, saying why', () => {
    expect(toMcpTool('files', { name: 'has space', inputSchema: { type: 'object' } }).problem).toContain('not a valid function name');
    expect(toMcpTool('files', { name: 'x'.repeat(60), inputSchema: { type: 'object' } }).problem).toContain('not a valid function name');
    const withUuid = toMcpTool('files', { name: 'get_123e4567-e89b-12d3-a456-426614174000', inputSchema: { type: 'object' } });
    expect(withUuid.problem).toBe('tool name files__get_[hidden id] holds a UUID, which the model must never see');
    expect(toMcpTool('files', { name: 'bad', inputSchema: { type: 'object', properties: { a: { type: 'nonsense' } } } }).problem).toContain(
      'invalid input schema',
    );
  });
});

describe('acceptedArguments', () => {
  const { tool } = toMcpTool('notes', {
    name: 'find',
    inputSchema: {
      type: 'object',
      properties: { query: { type: 'string' }, limit: { type: 'integer' }, due: { type: ['string', 'null'] } },
      required: ['query'],
    },
  });
  const validate = tool?.validate as Parameters<typeof acceptedArguments>[0];

  it('takes an optional argument sent as null as left out, and keeps a null the schema accepts', () => {
    expect(acceptedArguments(validate, { query: 'milk', limit: null })).toEqual({ query: 'milk' });
    expect(acceptedArguments(validate, { query: 'milk', due: null })).toEqual({ query: 'milk', due: null });
  });

  it('refuses what is wrong either way, with the reason', () => {
    expect(acceptedArguments(validate, { query: null })).toBeUndefined();
    expect(schemaProblems(validate)).toBe("arguments: must have required property 'query'");
    expect(acceptedArguments(validate, { query: 'milk', limit: 'ten' })).toBeUndefined();
    expect(schemaProblems(validate)).toBe('limit: must be integer');
  });
});
