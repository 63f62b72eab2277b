import path from 'node:path';
import { Api, type StreamEvent } from '../scripts/lib/api';
import { afterTools, byUserText, FakeModel, lastMessage } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';
import { FloodingMcpServer } from './helpers/flooding-mcp-server';

/**
 * An MCP server that misbehaves (docs/tools.md#mcp-tools), through the real processes: its tools
 * fail with a clear result, never the turn, and the tool worker goes on to the next call.
 */
const HOSTILE = path.resolve(__dirname, 'helpers/hostile-mcp-server.mjs');
const model = new FakeModel();
const flood = new FloodingMcpServer();
const system = new TestSystem();
let api: Api;

/** One tool call, then an answer. */
const once = (name: string, args: Record<string, unknown>) => (body: Parameters<typeof afterTools>[0]) =>
  afterTools(body) ? { content: `Done: ${String(lastMessage(body).content).slice(0, 200)}` } : { toolCalls: [{ name, arguments: args }] };
const find = (events: StreamEvent[], type: string) => events.find((event) => event.event === type)?.data;

beforeAll(async () => {
  await Promise.all([model.start(), flood.start()]);
  model.script = byUserText({
    'ping:': once('hostile__ping', {}),
    'broken text:': once('hostile__broken_text', {}),
    'locked:': once('hostile__locked', {}),
    // Each extra "a" doubles the time a backtracking RegExp takes to refuse it: hours here.
    'flood json:': once('flood__flood_json', {}),
    'flood event:': once('flood__flood_event', {}),
    'chatty:': once('flood__chatty', {}),
    'flood ping:': once('flood__ping', {}),
    'backtracking:': once('hostile__backtracking', { word: `${'a'.repeat(40)}!` }),
  });
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      MCP_SERVERS: JSON.stringify([
        { name: 'hostile', command: process.execPath, args: [HOSTILE] },
        { name: 'flood', url: flood.url },
      ]),
    },
  });
  api = new Api(system.url);
  const user = await api.createUser(system.adminToken);
  await waitFor(async () => {
    const sources = (await user.get<{ source: string }[]>('/v1/tools')).body.map((tool) => tool.source);
    return sources.includes('hostile') && sources.includes('flood');
  }, 'the hostile and flooding tools listed');
});

afterAll(async () => {
  await system.stop();
  await Promise.all([model.stop(), flood.stop()]);
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

it('shows the UUID in a JSON-RPC error of a tool as a ref, as in a result, so the model can name the record', async () => {
  const user = await api.createUser(system.adminToken);
  const { events } = await user.converse('locked: try it');
  expect(String(find(events, 'tool_failed')?.error)).toContain('Record hostile_1 is locked');
  expect(events.at(-1)?.data.status).toBe('completed');
});

it.each(['flood json', 'flood event'])(
  'fails a call whose answer is over 10 MB (%s) with that reason, the turn goes on, and the next call reaches the server again',
  async (prompt) => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turn_id: turnId } = await user.send(`${prompt}: try it`);
    // A failed connection asks whether to go on, as for any server that fails (tests/mcp.e2e.test.ts).
    const asked = await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    expect(String(find(asked, 'tool_failed')?.error)).toContain(
      'the connection to the MCP server "flood" failed: it sent a message over 10 MB',
    );
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: true })).status).toBe(202);
    expect((await user.events(turnId)).at(-1)?.data.status).toBe('completed');
    const next = await user.converse('flood ping: after it');
    expect(JSON.parse(String(find(next.events, 'tool_complete')?.result))).toMatchObject({ success: true, message: 'ping ran' });
  },
);

it('takes an answer after more than 10 MB of small SSE events: the limit counts one event, not the stream', async () => {
  const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const { events } = await user.converse('chatty: try it');
  expect(JSON.parse(String(find(events, 'tool_complete')?.result))).toMatchObject({ success: true, message: 'chatty ran' });
});
