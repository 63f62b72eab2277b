import { randomUUID } from 'node:crypto';
import { createClientRedis, type Redis } from '../redis';
import { MAX_MODEL_TOOLS, modelTools } from '../tools';
import { McpCatalog, mcpToolName, type McpToolEntry } from './mcp-catalog';

const prefix = `${process.env.QUEUE_PREFIX}-catalog-${randomUUID().slice(0, 8)}`;
let redis: Redis;

beforeAll(() => {
  redis = createClientRedis(process.env.REDIS_URL as string);
});

afterAll(async () => {
  await redis.del(`${prefix}:mcp:servers`);
  await redis.quit();
});

const tool = (server: string, name: string): McpToolEntry => ({
  name: mcpToolName(server, name),
  server,
  tool: name,
  description: `Does ${name}`,
  parameters: { type: 'object' },
  readOnly: true,
  idempotent: true,
});

describe('McpCatalog', () => {
  it('offers the tools of the configured servers by name, and no more than its limit', async () => {
    const publisher = new McpCatalog(redis, prefix, []);
    const updatedAt = new Date().toISOString();
    await publisher.publish({ server: 'zeta', status: 'up', tools: [tool('zeta', 'a'), tool('zeta', 'b')], updatedAt });
    await publisher.publish({ server: 'alpha', status: 'down', tools: [tool('alpha', 'y'), tool('alpha', 'x')], updatedAt });
    await publisher.publish({ server: 'gone', status: 'up', tools: [tool('gone', 'a')], updatedAt });

    const names = async (catalog: McpCatalog) => (await catalog.tools()).map((entry) => entry.name);
    expect(await names(new McpCatalog(redis, prefix, ['zeta', 'alpha']))).toEqual(['alpha__x', 'alpha__y', 'zeta__a', 'zeta__b']);
    expect(await names(new McpCatalog(redis, prefix, ['zeta', 'alpha'], 3))).toEqual(['alpha__x', 'alpha__y', 'zeta__a']);
    expect(await new McpCatalog(redis, prefix, ['zeta', 'alpha'], 3).leftOut()).toEqual(['zeta__b']);
    expect(await new McpCatalog(redis, prefix, ['zeta', 'alpha']).leftOut()).toEqual([]);
  });

  it('leaves room for every built-in tool within what one model request may carry', () => {
    expect(modelTools.length).toBeLessThan(MAX_MODEL_TOOLS);
  });
});
