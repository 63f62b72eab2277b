import path from 'node:path';
import { Api, type StreamEvent } from '../scripts/lib/api';
import { afterTools, byUserText, FakeModel, lastMessage } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * An MCP server that misbehaves (docs/tools.md#mcp-tools), through the real processes: its tools
 * fail with a clear result, never the turn, and the tool worker goes on to the next call.
 */
const HOSTILE = path.resolve(__dirname, 'helpers/hostile-mcp-server.mjs');
const model = new FakeModel();
const system = new TestSystem();
let api: Api;

/** One tool call, then an answer. */
const once = (name: string, args: Record<string, unknown>) => (body: Parameters<typeof afterTools>[0]) =>
  afterTools(body) ? { content: `Done: ${String(lastMessage(body).content).slice(0, 200)}` } : { toolCalls: [{ name, arguments: args }] };
const find = (events: StreamEvent[], type: string) => events.find((event) => event.event === type)?.data;

beforeAll(async () => {
  await model.start();
  model.script = byUserText({
    'ping:': once('hostile__ping', {}),
    'broken text:': once('hostile__broken_text', {}),
    // Each extra "a" doubles the time a backtracking RegExp takes to refuse it: hours here.
    'backtracking:': once('hostile__backtracking', { word: `${'a'.repeat(40)}!` }),
  });
  await system.start({
    env: { OPENAI_BASE_URL: model.url, MCP_SERVERS: JSON.stringify([{ name: 'hostile', command: process.execPath, args: [HOSTILE] }]) },
  });
  api = new Api(system.url);
  const user = await api.createUser(system.adminToken);
  await waitFor(
    async () => (await user.get<{ source: string }[]>('/v1/tools')).body.some((tool) => tool.source === 'hostile'),
    'the hostile tools listed',
  );
});

afterAll(async () => {
  await system.stop();
  await model.stop();
});

it('checks a schema pattern that backtracks without end in linear time: the call is refused, and the worker takes the next one', async () => {
  const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const { events } = await user.converse('backtracking: try it');
  expect(JSON.parse(String(find(events, 'tool_complete')?.result))).toMatchObject({ success: false });
  expect(String(find(events, 'tool_complete')?.result)).toContain('word: must match pattern');
  expect(events.at(-1)?.data.status).toBe('completed');
  const next = await user.converse('ping: after it');
  expect(JSON.parse(String(find(next.events, 'tool_complete')?.result))).toMatchObject({ success: true, message: 'ping ran' });
});

it('fails a call whose error text holds a NUL and a lone surrogate with that text, cleaned, not as an unknown outcome', async () => {
  const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const { events } = await user.converse('broken text: try it');
  const failed = events.find((event) => event.event === 'task_update' && event.data.status === 'failed')?.data;
  expect(failed?.error).toBe('bad input \uFFFD here');
  expect(events.at(-1)?.data.status).toBe('completed');
});
