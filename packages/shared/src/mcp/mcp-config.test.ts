import { ConfigError, parseConfig } from '../env';

const problems = (value: string) => {
  try {
    parseConfig({ MCP_SERVERS: value });
  } catch (error) {
    if (error instanceof ConfigError) return error.problems;
    throw error;
  }
  return [];
};

describe('MCP_SERVERS', () => {
  it('is an empty list when unset or blank', () => {
    expect(parseConfig({}).MCP_SERVERS).toEqual([]);
    expect(parseConfig({ MCP_SERVERS: '  ' }).MCP_SERVERS).toEqual([]);
  });

  it('reads stdio and Streamable HTTP servers', () => {
    const servers = [
      { name: 'everything', command: 'npx', args: ['-y', '@modelcontextprotocol/server-everything'], env: { DEBUG: '1' } },
      { name: 'home-lab', url: 'https://mcp.example.com/mcp', headers: { authorization: 'Bearer x' } },
    ];
    expect(parseConfig({ MCP_SERVERS: JSON.stringify(servers) }).MCP_SERVERS).toEqual(servers);
  });

  it('takes names a function name may start with, and the `type` other clients write', () => {
    const servers = [
      { name: 'mock_server', type: 'stdio', command: 'node' },
      { name: 'Echo', type: 'http', url: 'http://127.0.0.1:1/mcp' },
      { name: 'Files-2', type: 'streamable-http', url: 'http://127.0.0.1:2/mcp' },
    ];
    expect(parseConfig({ MCP_SERVERS: JSON.stringify(servers) }).MCP_SERVERS).toEqual(servers);
  });

  it('says what is wrong, one line per problem, without echoing the value', () => {
    expect(problems('[{"name":"x"')).toEqual(['MCP_SERVERS: must be a JSON array of MCP servers (see README, "MCP servers")']);
    expect(problems('{"name":"x","command":"y"}')).toHaveLength(1);
    const lines = problems(
      JSON.stringify([
        { name: 'bad__name', command: 'x' },
        { name: 'Folder', command: 'x' },
        { name: 'web', url: 'ftp://example.com' },
        { name: 'twice', command: 'x' },
        { name: 'twice', url: 'http://127.0.0.1:1/mcp' },
        { name: 'trailing_', command: 'x' },
        { name: '1st', command: 'x' },
      ]),
    );
    expect(lines.some((line) => line.startsWith('MCP_SERVERS.0') && line.includes('"__"'))).toBe(true);
    expect(lines.some((line) => line.startsWith('MCP_SERVERS.1') && line.includes('entity'))).toBe(true);
    expect(lines.some((line) => line.startsWith('MCP_SERVERS.2'))).toBe(true);
    expect(lines).toContain('MCP_SERVERS.4.name: "twice" is used twice');
    expect(lines.some((line) => line.startsWith('MCP_SERVERS.5') && line.includes('"__"'))).toBe(true);
    expect(lines.some((line) => line.startsWith('MCP_SERVERS.6') && line.includes('starting with a letter'))).toBe(true);
    expect(problems(JSON.stringify([{ name: 'typed', type: 'http', command: 'x' }]))).toHaveLength(1);
    expect(problems('[{"name":"x"}]')).toEqual([expect.stringMatching(/^MCP_SERVERS\.0: must be \{"name","command"/)]);
  });

  it('refuses a blank command, as it refuses a missing one, instead of a server that never starts', () => {
    for (const command of ['', '   ']) {
      expect(problems(JSON.stringify([{ name: 'blank', command }]))).toEqual(['MCP_SERVERS.0.command: must not be blank']);
    }
    expect(parseConfig({ MCP_SERVERS: '[{"name":"padded","command":" node "}]' }).MCP_SERVERS).toEqual([
      { name: 'padded', command: 'node' },
    ]);
  });

  it('says what a list and a URL must be in words of its own', () => {
    for (const value of ['{"name":"x","command":"y"}', '"x"', 'null']) {
      expect(problems(value)).toEqual(['MCP_SERVERS: must be a JSON array of MCP servers (see README, "MCP servers")']);
    }
    for (const url of ['ftp://example.com', 'localhost:8080/mcp', '']) {
      expect(problems(JSON.stringify([{ name: 'web', url }]))).toEqual(['MCP_SERVERS.0.url: must be an http:// or https:// URL']);
    }
  });
});
