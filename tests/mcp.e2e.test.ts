import { spawn, type ChildProcess } from 'node:child_process';
import { Queue } from 'bullmq';
import { once as onceEvent } from 'node:events';
import http from 'node:http';
import path from 'node:path';
import { eraseUserJobId, McpCatalog, Redis } from '@assistant/shared';
import { Api, UUID, type StreamEvent } from '../scripts/lib/api';
import { afterTools, byUserText, FakeModel, lastMessage, userText } from '../scripts/lib/fake-model';
import { NotesMcpServer } from './helpers/notes-mcp-server';
import { freePort, TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * Tools from MCP servers (docs/tools.md#mcp-tools), through the real processes: server-everything from npm
 * over stdio (`everything`) and over Streamable HTTP (`remote`), the tests' own notes server
 * (`notes`, UUIDs in its results), one with a tool out of shape (`loose`) and one whose handshake
 * answer is (`unversioned`), a server whose command does not exist (`broken`) and one that takes
 * connections but never answers (`silent`).
 */
const EVERYTHING = path.resolve(__dirname, '../node_modules/@modelcontextprotocol/server-everything/dist/index.js');
const LOOSE = path.resolve(__dirname, 'helpers/loose-tools-mcp-server.mjs');
const TOOL_TIMEOUT_MS = 3_000;
const model = new FakeModel();
const notes = new NotesMcpServer();
const system = new TestSystem();
let remote: ChildProcess;
let remotePort: number;
const silent = http.createServer(() => undefined);
let api: Api;

/** server-everything over Streamable HTTP on `remotePort`, once it listens. */
async function startRemote(): Promise<void> {
  remote = spawn(process.execPath, [EVERYTHING, 'streamableHttp'], { env: { ...process.env, PORT: String(remotePort) }, stdio: 'ignore' });
  await waitFor(
    async () =>
      fetch(`http://127.0.0.1:${remotePort}/mcp`).then(
        () => true,
        () => false,
      ),
    'server-everything over HTTP listening',
  );
}

const call = (name: string, args: Record<string, unknown>) => () => ({ toolCalls: [{ name, arguments: args }] });
/** One tool call, then an answer that quotes the tool's result. */
const once = (name: string, args: Record<string, unknown>) => (body: Parameters<typeof afterTools>[0]) =>
  afterTools(body) ? { content: `Done: ${String(lastMessage(body).content).slice(0, 200)}` } : call(name, args)();

beforeAll(async () => {
  await model.start();
  await notes.start();
  silent.listen(0, '127.0.0.1');
  await onceEvent(silent, 'listening');
  remotePort = await freePort();
  await startRemote();

  model.script = byUserText({
    'sum:': once('everything__get-sum', { a: 2, b: 3 }),
    'toggle:': once('remote__toggle-subscriber-updates', {}),
    'remote sum:': once('remote__get-sum', { a: 4, b: 5 }),
    'manual:': (body) =>
      afterTools(body) && lastMessage(body).tool_call_id === 'toggle'
        ? { content: 'Toggled.' }
        : afterTools(body)
          ? { content: 'waiting' }
          : {
              toolCalls: [
                { id: 'echo', name: 'everything__echo', arguments: { message: 'hello' } },
                { id: 'toggle', name: 'remote__toggle-subscriber-updates', arguments: {} },
              ],
            },
    'long:': once('everything__trigger-long-running-operation', { duration: 30, steps: 30 }),
    'slow:': once('notes__slow_write', { label: 'timeout' }),
    'crash:': once('notes__slow_write', { label: 'crash' }),
    'erased:': once('notes__slow_write', { label: 'erased' }),
    'bad args:': once('everything__get-sum', { a: 'two' }),
    'made up:': once('notes__delete_everything', {}),
    'broken:': once('broken__anything', {}),
    'silent:': once('silent__anything', {}),
    'unversioned:': once('unversioned__ping', {}),
    'note:': (body, index) => {
      const results = body.messages.filter((message) => message.role === 'tool');
      if (results.length === 0) return call('notes__create_note', { title: 'Groceries' })();
      if (results.length === 1) return call('notes__get_note', { note_id: /notes_\d+/.exec(String(results[0]?.content))?.[0] ?? 'none' })();
      if (results.length === 2) return call('notes__get_note', { note_id: 'notes_99' })();
      return { content: `Read it (${index}).` };
    },
  });
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TOOL_TIMEOUT_MS: String(TOOL_TIMEOUT_MS),
      MCP_SERVERS: JSON.stringify([
        { name: 'everything', command: process.execPath, args: [EVERYTHING, 'stdio'] },
        { name: 'remote', url: `http://127.0.0.1:${remotePort}/mcp` },
        { name: 'notes', url: notes.url, headers: { 'x-test': 'notes' } },
        { name: 'loose', command: process.execPath, args: [LOOSE] },
        { name: 'unversioned', command: process.execPath, args: [LOOSE, 'unversioned'] },
        { name: 'broken', command: '/nonexistent/mcp-server' },
        { name: 'silent', url: `http://127.0.0.1:${(silent.address() as { port: number }).port}/mcp` },
      ]),
    },
  });
  api = new Api(system.url);
  // The tool worker connects in the background; the gateway lists what it has published.
  const user = await api.createUser(system.adminToken);
  await waitFor(async () => {
    const sources = new Set((await user.get<{ source: string }[]>('/v1/tools')).body.map((tool) => tool.source));
    return ['everything', 'remote', 'notes'].every((server) => sources.has(server));
  }, 'the MCP tools listed');
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  remote?.kill('SIGTERM');
  silent.closeAllConnections();
  silent.close();
  await notes.stop();
  await model.stop();
});

const types = (events: StreamEvent[]) => events.map((event) => event.event).filter((type) => type !== 'token');
/** What a client sees of the events besides the turn's own id. */
const visible = (events: StreamEvent[]) => JSON.stringify(events.map(({ data: { turn_id: _turnId, ...fields } }) => fields));
const find = (events: StreamEvent[], type: string) => events.find((event) => event.event === type)?.data;

describe('listing', () => {
  it('shows built-in and MCP tools with their schema, whether they change data and their source', async () => {
    const user = await api.createUser(system.adminToken);
    const tools = (await user.get('/v1/tools')).body as {
      name: string;
      description: string;
      parameters: any;
      mutates: boolean;
      source: string;
    }[];
    const byName = new Map(tools.map((tool) => [tool.name, tool]));
    expect(byName.get('create_folder')).toMatchObject({ source: 'builtin', mutates: true });
    expect(byName.get('list_habits')).toMatchObject({ source: 'builtin', mutates: false });
    expect(byName.get('everything__echo')).toMatchObject({
      source: 'everything',
      mutates: false,
      description: 'Echoes back the input string',
      parameters: { type: 'object', properties: { message: { type: 'string' } }, required: ['message'] },
    });
    expect(byName.get('remote__get-sum')).toMatchObject({ source: 'remote', mutates: false });
    expect(byName.get('remote__toggle-subscriber-updates')).toMatchObject({ source: 'remote', mutates: true });
    expect(byName.get('notes__create_note')).toMatchObject({ source: 'notes', mutates: true });
    expect(tools.some((tool) => tool.source === 'broken')).toBe(false);
    expect(tools.findIndex((tool) => tool.source !== 'builtin')).toBeGreaterThan(tools.findIndex((tool) => tool.name === 'update_profile'));
    expect((await new Api(system.url).get('/v1/tools')).status).toBe(401);
  });

  it('lists the tools of a server that also has a tool out of shape, leaving that one out', async () => {
    const user = await api.createUser(system.adminToken);
    const loose = await waitFor(async () => {
      const tools = (await user.get<{ name: string; source: string }[]>('/v1/tools')).body.filter((tool) => tool.source === 'loose');
      return tools.length > 0 ? tools : undefined;
    }, 'the loose server listed');
    expect(loose.map((tool) => tool.name)).toEqual(['loose__ping']);
  });

  it('takes a manual gotcha about an MCP tool of a configured server, not of another', async () => {
    const user = await api.createUser(system.adminToken);
    const added = await user.post('/v1/gotchas', { tool_name: 'notes__create_note', description: 'Titles in Portuguese.' });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({ tool_name: 'notes__create_note' });
    const refused = await user.post('/v1/gotchas', { tool_name: 'elsewhere__create_note', description: 'x' });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ path: ['tool_name'] })]);
  });

  it('offers the model the same tools, and lists a tool the server adds while running (list_changed)', async () => {
    const user = await api.createUser(system.adminToken);
    const { events } = await user.converse('sum: please');
    expect(events.at(-1)?.data.status).toBe('completed');
    const request = model.requests.find((r) => userText(r.body) === 'sum: please');
    const offered = (request?.body.tools ?? []).map((tool) => tool.function.name);
    const listed = ((await user.get('/v1/tools')).body as { name: string }[]).map((tool) => tool.name);
    expect(offered).toEqual(listed);

    notes.addTool('added_later');
    await waitFor(
      async () => ((await user.get('/v1/tools')).body as { name: string }[]).some((tool) => tool.name === 'notes__added_later'),
      'notes__added_later listed',
    );
  });
});

describe('calls', () => {
  it('runs a read-only tool over stdio in autonomous mode, as a task with its events', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { events } = await user.converse('sum: 2 and 3');
    expect(types(events)).toEqual(['turn_started', 'task_update', 'tool_start', 'tool_complete', 'task_update', 'message', 'done']);
    expect(find(events, 'tool_start')).toMatchObject({ tool_name: 'everything__get-sum', arguments: { a: 2, b: 3 } });
    expect(JSON.parse(String(find(events, 'tool_complete')?.result))).toMatchObject({ success: true, message: 'The sum of 2 and 3 is 5.' });
    expect(events.at(-1)?.data.status).toBe('completed');
  });

  it('runs a tool over Streamable HTTP in autonomous mode, a UUID in its result shown as a ref', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { events } = await user.converse('toggle: updates');
    const result = String(find(events, 'tool_complete')?.result);
    expect(result).toMatch(/simulated resource updated notifications for session remote_\d+/);
    expect(visible(events)).not.toMatch(UUID);
    expect(events.at(-1)?.data.status).toBe('completed');
  });

  it('in manual mode runs the read-only tool at once and asks approval for the other', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('manual: both');
    const waiting = await user.events(turnId, {
      until: (event) => event.event === 'task_update' && event.data.task_id === 'task_1' && event.data.status === 'completed',
    });
    expect(find(waiting, 'tool_approval_request')).toMatchObject({ task_id: 'task_2', tool_name: 'remote__toggle-subscriber-updates' });
    expect(find(waiting, 'tool_complete')).toMatchObject({ task_id: 'task_1', tool_name: 'everything__echo' });
    await waitFor(async () => (await user.get(`/v1/turns/${turnId}`)).body.status === 'awaiting_approval', 'awaiting approval');
    const approvalId = find(waiting, 'tool_approval_request')?.approval_id;
    expect((await user.post(`/v1/approvals/${approvalId}`, { decision: 'approve' })).status).toBe(200);
    const rest = await user.events(turnId, { lastEventId: waiting.at(-1)?.id });
    expect(types(rest).slice(0, 5)).toEqual(['tool_approved', 'task_update', 'tool_start', 'tool_complete', 'task_update']);
    expect(rest.at(-1)?.data.status).toBe('completed');
  });

  it('in manual mode fails a tool the connected server does not have at once, asking no approval for it', async () => {
    const user = await api.createUser(system.adminToken);
    const { events } = await user.converse('made up: delete');
    expect(find(events, 'tool_approval_request')).toBeUndefined();
    expect(JSON.parse(String(find(events, 'tool_complete')?.result))).toMatchObject({
      success: false,
      error: 'There is no tool named "notes__delete_everything".',
    });
    expect(events.at(-1)?.data.status).toBe('completed');
  });

  it('refuses arguments that do not match the JSON Schema before calling, and the model is told', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { events } = await user.converse('bad args: sum');
    const result = JSON.parse(String(find(events, 'tool_complete')?.result));
    expect(result).toMatchObject({ success: false });
    expect(result.error).toContain('a: must be number');
    expect(events.at(-1)?.data.status).toBe('completed');
  });
});

describe('timeouts and retries', () => {
  it('times out an idempotent server-everything tool after TOOL_TIMEOUT_MS and retries it once', async () => {
    const user = await api.createUser(system.adminToken);
    const { events } = await user.converse('long: operation');
    expect(types(events).filter((type) => type.startsWith('tool_'))).toEqual([
      'tool_start',
      'tool_timeout',
      'tool_retry',
      'tool_timeout',
      'tool_failed',
    ]);
    expect(find(events, 'tool_timeout')).toMatchObject({
      tool_name: 'everything__trigger-long-running-operation',
      timeout_seconds: TOOL_TIMEOUT_MS / 1000,
    });
    expect(events.at(-1)?.data.status).toBe('completed');
  });

  it('erases a user while their tool call runs, and removes its job once it ends: no job names their turn', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turn_id: turnId } = await user.send('erased: write');
    await notes.waitForCalls('slow_write', notes.calls.filter((c) => c.tool === 'slow_write').length + 1);
    expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
    const connection = { url: process.env.REDIS_URL ?? 'redis://127.0.0.1:6379' };
    const [digests, toolCalls] = [
      new Queue('session-digests', { connection, prefix: system.prefix }),
      new Queue('tool-calls', { connection, prefix: system.prefix }),
    ];
    try {
      await waitFor(async () => (await digests.getJobState(eraseUserJobId(user.userId))) === 'unknown', 'the erasure job to end', {
        timeoutMs: 30_000,
      });
      const left = await toolCalls.getJobs(['wait', 'delayed', 'active', 'completed', 'failed']);
      expect(left.filter((job) => job?.data.turnId === turnId)).toEqual([]);
    } finally {
      await Promise.all([digests.close(), toolCalls.close()]);
    }
  });

  it('cancels a timed-out call on the server and does not retry a tool without idempotentHint', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turn_id: turnId } = await user.send('slow: write');
    const asked = await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    expect(types(asked).filter((type) => type.startsWith('tool_'))).toEqual(['tool_start', 'tool_timeout', 'tool_failed']);
    await notes.waitForCancel('timeout');
    expect(notes.calls.filter((c) => c.tool === 'slow_write' && c.args.label === 'timeout')).toHaveLength(1);
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: true })).status).toBe(202);
    expect((await user.events(turnId)).at(-1)?.data.status).toBe('completed');
  });
});

describe('a server that cannot start', () => {
  /** The error a call to `server`'s tool fails with; the turn then goes on when told to. */
  async function failedCall(server: string): Promise<string> {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turn_id: turnId } = await user.send(`${server}: try it`);
    const asked = await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: true })).status).toBe(202);
    expect((await user.events(turnId)).at(-1)?.data.status).toBe('completed');
    return String(find(asked, 'tool_failed')?.error);
  }

  it('blocks nothing else, and a call to it fails with a clear result', async () => {
    expect(await failedCall('broken')).toContain('The MCP server "broken" is not available right now');
  });

  it('fails a call to a server that never answers its handshake with a clear result, and the turn goes on', async () => {
    expect(await failedCall('silent')).toContain('The MCP server "silent" is not available right now');
  });

  it('says what is wrong with a server whose handshake answer is out of shape', async () => {
    expect(await failedCall('unversioned')).toContain(
      'The MCP server "unversioned" is not available right now (its answer is not valid MCP: serverInfo.version:',
    );
  });
});

describe('IDs', () => {
  it('shows the model refs for the UUIDs of an MCP result and translates them back in arguments', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const before = model.requests.length;
    const { events } = await user.converse('note: groceries');
    expect(events.at(-1)?.data.status).toBe('completed');
    const results = events.filter((event) => event.event === 'tool_complete').map((event) => JSON.parse(String(event.data.result)));
    expect(results[0].message).toMatch(/^Created note "Groceries" with id notes_\d+\.$/);
    const ref = /notes_\d+/.exec(results[0].message)?.[0];
    // The server got the real UUID back and answered with it, shown again as the same ref.
    const [getCall] = await notes.waitForCalls('get_note');
    expect(getCall?.args.note_id).toMatch(UUID);
    expect(notes.notes.get(String(getCall?.args.note_id))).toBe('Groceries');
    expect(results[1]).toMatchObject({ success: true, message: `Note ${ref}: "Groceries"` });
    expect(results[2]).toMatchObject({ success: false });
    expect(results[2].error).toContain('notes_99 is not a ref of this conversation');
    for (const request of model.requests.slice(before)) expect(request.raw).not.toMatch(UUID);
    expect(visible(events)).not.toMatch(UUID);
  });
});

describe('crash safety', () => {
  it('fails a non-idempotent call cut by kill -9 of the tool worker as "outcome unknown", never calls it twice, and completes the turn', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turn_id: turnId } = await user.send('crash: write');
    await notes.waitForCalls('slow_write', notes.calls.filter((c) => c.tool === 'slow_write').length + 1);
    await system.signal('tool-worker', 'SIGKILL');
    system.spawn('tool-worker');
    const events = await user.events(turnId, { timeoutMs: 45_000 });
    const failed = find(events, 'tool_failed');
    expect(failed).toMatchObject({ tool_name: 'notes__slow_write' });
    expect(String(failed?.error)).toContain('outcome of notes__slow_write is unknown');
    expect(events.find((event) => event.event === 'task_update' && event.data.status === 'failed')?.data.error).toContain('unknown');
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(notes.calls.filter((c) => c.tool === 'slow_write' && c.args.label === 'crash')).toHaveLength(1);
    const followUp = model.requests.filter((r) => userText(r.body) === 'crash: write' && afterTools(r.body));
    expect(followUp.at(-1)?.raw).toContain('is unknown');
  });
});

describe('a server that goes away', () => {
  it('fails its tools clearly, retries only the idempotent one, and reconnects when the server is back', async () => {
    remote.kill('SIGTERM');
    await onceEvent(remote, 'exit');
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });

    const { turn_id: toggleTurn } = await user.send('toggle: while it is gone');
    const asked = await user.events(toggleTurn, { until: (event) => event.event === 'ask_user_continue' });
    expect(types(asked).filter((type) => type.startsWith('tool_'))).toEqual(['tool_start', 'tool_failed']);
    expect(String(find(asked, 'tool_failed')?.error)).toContain('MCP server "remote"');
    expect((await user.post(`/v1/turns/${toggleTurn}/continue`, { continue: true })).status).toBe(202);
    expect((await user.events(toggleTurn)).at(-1)?.data.status).toBe('completed');

    const { turn_id: sumTurn } = await user.send('remote sum: while it is gone');
    const retried = await user.events(sumTurn, { until: (event) => event.event === 'ask_user_continue' });
    expect(types(retried).filter((type) => type.startsWith('tool_'))).toEqual(['tool_start', 'tool_retry', 'tool_failed']);
    expect((await user.post(`/v1/turns/${sumTurn}/continue`, { continue: false })).status).toBe(202);
    await user.events(sumTurn);

    await startRemote();
    const redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379');
    try {
      const catalog = new McpCatalog(redis, system.prefix, ['remote']);
      await waitFor(async () => (await catalog.states())[0]?.status === 'up', 'remote reconnected', { timeoutMs: 45_000 });
    } finally {
      redis.disconnect();
    }
    const { events } = await user.converse('remote sum: now that it is back');
    expect(JSON.parse(String(find(events, 'tool_complete')?.result))).toMatchObject({ success: true, message: 'The sum of 4 and 5 is 9.' });
  });

  it('sends the first call after an HTTP server restarted on a new session: it works at once, whatever the tool', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    expect(find((await user.converse('toggle: before the restart')).events, 'tool_complete')).toBeDefined();
    remote.kill('SIGTERM');
    await onceEvent(remote, 'exit');
    await startRemote();
    // The tool worker still holds the old session: the server refuses its next call (400 here) without running it.
    const { events } = await user.converse('toggle: right after the restart');
    expect(types(events).filter((type) => type.startsWith('tool_'))).toEqual(['tool_start', 'tool_complete']);
  });
});
