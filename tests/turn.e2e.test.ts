import type pg from 'pg';
import { Api, UUID, type StreamEvent } from '../scripts/lib/api';
import { injectFault, testDb } from './helpers/db';
import { FakeModel, lastMessage, type FakeReply } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/**
 * One turn end to end through the real processes and a fake OpenAI-compatible model:
 * events, refs instead of UUIDs, resume with Last-Event-ID, retries and timeouts.
 */
const model = new FakeModel();
const system = new TestSystem();
let db: pg.Pool;
let removeFaults: () => Promise<void>;
let api: Api;

/** Per test: what the model answers when the last message is the user's, then after tool results. */
let plan: (userText: string) => FakeReply;
let answer: (toolResults: string[]) => FakeReply;

beforeAll(async () => {
  await model.start();
  model.script = (body) => {
    const last = lastMessage(body);
    if (last.role === 'user') return plan(String(last.content));
    const results = body.messages.slice(body.messages.map((m) => m.role).lastIndexOf('assistant') + 1);
    return answer(results.map((m) => String(m.content)));
  };
  db = testDb();
  // Faults injected in the database itself: a folder named "Flaky…" fails every other insert,
  // one named "Slow…" hangs until the statement is cancelled.
  await db.query('CREATE SEQUENCE IF NOT EXISTS test_flaky_seq');
  removeFaults = await injectFault(
    db,
    'test_faults',
    'folders',
    `IF NEW.name LIKE 'Flaky%' AND nextval('test_flaky_seq') % 2 = 1 THEN RAISE EXCEPTION 'injected failure'; END IF;
     IF NEW.name LIKE 'Slow%' THEN PERFORM pg_sleep(30); END IF;`,
  );
  await system.start({ env: { OPENAI_BASE_URL: model.url, TOOL_TIMEOUT_MS: '1000' } });
  api = new Api(system.url);
});

afterAll(async () => {
  await system.stop();
  await model.stop();
  await removeFaults();
  await db.end();
});

async function autonomousUser(name = 'Ana'): Promise<Api & { userId: string }> {
  return api.createUser(system.adminToken, { name, preferences: { autonomous_mode: true } });
}

function types(events: StreamEvent[]): string[] {
  return events.map((event) => event.event);
}

function expectContiguous(events: StreamEvent[]): void {
  expect(events.map((event) => event.data.seq)).toEqual(events.map((_, i) => i + 1));
}

describe('a turn through the model', () => {
  it('plans two tool calls, runs them, streams the answer, and never shows the model a UUID', async () => {
    const user = await autonomousUser();
    plan = () => ({
      toolCalls: [
        { name: 'create_folder', arguments: { name: 'Work' } },
        { name: 'create_document', arguments: { title: 'Plan', folder_id: 'Work' } },
      ],
    });
    answer = () => ({ content: 'Created the folder Work and the document Plan inside it.', chunkSize: 7 });

    const { turnId, events } = await user.converse('create folder Work and a document Plan in it');
    const tokens = events.filter((event) => event.event === 'token');
    expect(types(events)).toEqual([
      'turn_started',
      'task_list',
      'task_update',
      'tool_start',
      'tool_complete',
      'task_update',
      'task_update',
      'tool_start',
      'tool_complete',
      'task_update',
      ...tokens.map(() => 'token'),
      'message',
      'done',
    ]);
    expect(tokens.length).toBeGreaterThan(1);
    expectContiguous(events);
    expect(events.every((event) => event.data.turn_id === turnId)).toBe(true);

    const [started, list, firstUpdate, firstStart, firstComplete, firstDone] = events;
    expect(started?.data.session_key).toBe('agent:main:main');
    expect(list?.data.tasks).toEqual([
      { id: 'task_1', description: 'Create folder "Work"', tool_name: 'create_folder', status: 'pending' },
      { id: 'task_2', description: 'Create document "Plan" in "Work"', tool_name: 'create_document', status: 'pending' },
    ]);
    expect(firstUpdate?.data).toMatchObject({ task_id: 'task_1', status: 'in_progress' });
    expect(firstStart?.data).toMatchObject({ task_id: 'task_1', tool_name: 'create_folder', arguments: { name: 'Work' } });
    const folderResult = JSON.parse(String(firstComplete?.data.result));
    expect(folderResult).toMatchObject({ success: true, folder_id: 'folder_1' });
    expect(folderResult.message).toContain('[ID: folder_1]');
    expect(folderResult.next_step).toBeTruthy();
    expect(firstDone?.data).toMatchObject({ task_id: 'task_1', status: 'completed' });
    expect(typeof firstDone?.data.duration_ms).toBe('number');
    expect(tokens.map((event) => event.data.delta).join('')).toBe('Created the folder Work and the document Plan inside it.');
    expect(events.at(-2)?.data).toMatchObject({ role: 'assistant', content: 'Created the folder Work and the document Plan inside it.' });
    expect(events.at(-1)?.data).toMatchObject({ status: 'completed' });

    const turn = await user.get(`/v1/turns/${turnId}`);
    expect(turn.body).toMatchObject({ id: turnId, status: 'completed', session_key: 'agent:main:main', iterations: 2 });
    expect(turn.body.finished_at).toBeTruthy();

    const rows = await db.query(`SELECT f.name, d.title FROM folders f JOIN documents d ON d.folder_id = f.id WHERE f.user_id = $1`, [
      user.userId,
    ]);
    expect(rows.rows).toEqual([{ name: 'Work', title: 'Plan' }]);

    const second = model.requests.at(-1)?.raw ?? '';
    expect(second).toContain('[ID: folder_1]');
    for (const request of model.requests) expect(request.raw).not.toMatch(UUID);
  });

  it('resumes with Last-Event-ID in the middle of a turn, missing nothing and repeating nothing', async () => {
    const user = await autonomousUser();
    plan = () => ({ toolCalls: [{ name: 'create_folder', arguments: { name: 'Resume' } }] });
    answer = () => ({ content: 'The folder Resume is ready for you now.', chunkSize: 3, delayMs: 400 });

    const { turn_id: turnId } = await user.send('make a folder Resume');
    const first = await user.events(turnId, { until: (event) => event.event === 'tool_complete' });
    const rest = await user.events(turnId, { lastEventId: first.at(-1)?.id });
    const all = [...first, ...rest];
    expectContiguous(all);
    expect(types(all).at(-1)).toBe('done');

    const replay = await user.events(turnId);
    expect(replay.map((event) => event.id)).toEqual(all.map((event) => event.id));
    // Opaque ids increase compared as text, as a client would compare them.
    const ids = all.map((event) => event.id);
    expect([...ids].sort()).toEqual(ids);
    // EventSource reconnects with the id of `done` after the stream closes: nothing more, and it ends.
    expect(await user.events(turnId, { lastEventId: all.at(-1)?.id, timeoutMs: 5_000 })).toEqual([]);
  });

  it('resumes a client naming an id past the stream from its last event, and still closes after done', async () => {
    const user = await autonomousUser();
    plan = () => ({ content: 'A slow hello to you.', delayMs: 1_000 });
    const { turn_id: turnId } = await user.send('hello slowly');
    const started = await user.events(turnId, { until: (event) => event.event === 'turn_started' });
    const rest = await user.events(turnId, { lastEventId: '99999999999999-0', timeoutMs: 10_000 });
    expect(types(rest).at(-1)).toBe('done');
    expect(rest[0]?.data.seq).toBe((started.at(-1)?.data.seq as number) + 1);
  });

  it("resumes after an id whose sequence part is past 64 bits, without holding up the turn's other streams", async () => {
    const user = await autonomousUser();
    plan = () => ({ content: 'A slow hello to you.', delayMs: 1_000 });
    const { turn_id: turnId } = await user.send('hello slowly');
    const started = await user.events(turnId, { until: (event) => event.event === 'turn_started' });
    const [odd, resumed] = await Promise.all([
      user.events(turnId, { lastEventId: '1-99999999999999999999999', timeoutMs: 10_000 }),
      user.events(turnId, { lastEventId: started.at(-1)?.id, timeoutMs: 10_000 }),
    ]);
    expect(types(resumed).at(-1)).toBe('done');
    expect(odd.map((event) => event.id)).toEqual([...started, ...resumed].map((event) => event.id));
  });

  it('retries a tool that fails once, and completes it', async () => {
    const user = await autonomousUser();
    plan = () => ({ toolCalls: [{ name: 'create_folder', arguments: { name: 'Flaky one' } }] });
    answer = () => ({ content: 'Done.' });

    const { events } = await user.converse('create folder Flaky one');
    expect(types(events)).toEqual(expect.arrayContaining(['tool_start', 'tool_retry', 'tool_complete', 'message', 'done']));
    const retry = events.find((event) => event.event === 'tool_retry');
    expect(retry?.data).toMatchObject({ task_id: 'task_1', tool_name: 'create_folder', attempt: 2, max_attempts: 2 });
    expect(String(retry?.data.reason)).toContain('injected failure');
    expect(events.at(-1)?.data.status).toBe('completed');
    const rows = await db.query('SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1', [user.userId]);
    expect(rows.rows[0].n).toBe(1);
  });

  it('times out a hanging tool twice, fails the task with a clear error, and leaves the session usable', async () => {
    const user = await autonomousUser();
    plan = (text) =>
      text.includes('Slow') ? { toolCalls: [{ name: 'create_folder', arguments: { name: 'Slow one' } }] } : { content: 'Hello again.' };
    answer = () => ({ content: 'That did not work.' });

    const { turn_id: turnId } = await user.send('create folder Slow one');
    const events = await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    expect(types(events)).toEqual([
      'turn_started',
      'task_update',
      'tool_start',
      'tool_timeout',
      'tool_retry',
      'tool_timeout',
      'tool_failed',
      'task_update',
      'ask_user_continue',
    ]);
    expect(events.find((event) => event.event === 'tool_timeout')?.data).toMatchObject({ timeout_seconds: 1 });
    expect(String(events.find((event) => event.event === 'tool_failed')?.data.error)).toMatch(/timed out/);
    expect(events.at(-2)?.data).toMatchObject({ task_id: 'task_1', status: 'failed' });
    expect((await user.get(`/v1/turns/${turnId}`)).body.status).toBe('awaiting_user');

    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: false })).status).toBe(202);
    const end = await user.events(turnId, { lastEventId: events.at(-1)?.id });
    expect(end.at(-1)?.data.status).toBe('completed');
    const rows = await db.query('SELECT COUNT(*)::int AS n FROM folders WHERE user_id = $1', [user.userId]);
    expect(rows.rows[0].n).toBe(0);

    const next = await user.converse('hello');
    expect(next.events.at(-1)?.data.status).toBe('completed');
  });

  it.each([
    ['an unknown ref', { name: 'rename_folder', arguments: { folder_id: 'folder_99', new_name: 'X' } }, /folder_99/],
    ['an ambiguous name', { name: 'rename_folder', arguments: { folder_id: 'Twin', new_name: 'X' } }, /matches 2 folders/],
    ['a UUID', { name: 'rename_folder', arguments: { folder_id: '3f2b8c1e-9d4a-4b7e-8f00-1234567890ab', new_name: 'X' } }, /UUID/],
    ['the placeholder of a hidden UUID', { name: 'rename_folder', arguments: { folder_id: '[hidden id]', new_name: 'X' } }, /UUID/],
    ['a 300-character title', { name: 'rename_folder', arguments: { folder_id: 'Twin', new_name: 'x'.repeat(300) } }, /at most 100/],
  ])('answers %s with success: false, changes nothing and carries on', async (_case, call, problem) => {
    const user = await autonomousUser();
    await db.query(
      `WITH parent AS (INSERT INTO folders (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Home', 'home') RETURNING id)
       INSERT INTO folders (id, user_id, parent_id, name, name_key)
       VALUES (gen_random_uuid(), $1, NULL, 'Twin', 'twin'), (gen_random_uuid(), $1, (SELECT id FROM parent), 'Twin', 'twin')`,
      [user.userId],
    );
    plan = () => ({ toolCalls: [call] });
    answer = (results) => ({ content: `I could not: ${results.length} result` });

    const { events } = await user.converse('rename it');
    const complete = events.find((event) => event.event === 'tool_complete');
    const result = JSON.parse(String(complete?.data.result));
    expect(result.success).toBe(false);
    expect(`${result.error} ${result.hint}`).toMatch(problem);
    expect(JSON.stringify(result)).not.toMatch(UUID);
    if (_case === 'an ambiguous name') expect(result.candidates).toHaveLength(2);
    expect(events.at(-1)?.data.status).toBe('completed');
    const names = await db.query('SELECT name FROM folders WHERE user_id = $1 ORDER BY name', [user.userId]);
    expect(names.rows.map((row) => row.name)).toEqual(['Home', 'Twin', 'Twin']);
    for (const request of model.requests) expect(request.raw).not.toMatch(UUID);
  });
});

describe('bad requests', () => {
  it('answers 401 without or with a wrong API key', async () => {
    expect((await api.post('/v1/messages', { text: 'hi' })).status).toBe(401);
    const wrong = await api.as('ak_wrong').post('/v1/messages', { text: 'hi' });
    expect(wrong.status).toBe(401);
    expect(wrong.body.error.code).toBe('unauthorized');
  });

  it('answers 400 to malformed JSON and invalid fields, 413 to oversized bodies and messages', async () => {
    const user = await api.createUser(system.adminToken);
    const malformed = await user.request('POST', '/v1/messages', '{"text": ', { 'content-type': 'application/json' });
    expect(malformed.status).toBe(400);
    expect(malformed.body.error.code).toBe('invalid_json');
    const invalid = await user.post('/v1/messages', { text: '' });
    expect(invalid.status).toBe(400);
    expect(invalid.body.error.details).toBeDefined();
    expect((await user.post('/v1/messages', { text: 'hi', session_key: 'nope' })).status).toBe(400);
    expect((await user.post('/v1/messages', { text: 'x'.repeat(1_100_000) })).status).toBe(413);
    expect((await user.post('/v1/messages', { text: 'x'.repeat(16_001) })).status).toBe(413);
    // Characters, not UTF-16 units: 9,000 emoji are 9,000 characters.
    plan = () => ({ content: 'ok' });
    expect((await user.post('/v1/messages', { text: '😀'.repeat(9_000) })).status).toBe(202);
  });

  it('reads a JSON body whatever its content type says', async () => {
    const user = await api.createUser(system.adminToken);
    plan = () => ({ content: 'ok' });
    const res = await user.request('POST', '/v1/messages', JSON.stringify({ text: 'no header' }), { 'content-type': 'text/plain' });
    expect(res.status).toBe(202);
    await user.events(res.body.turn_id);
  });

  it("answers 404 to an unknown turn and to another user's turn", async () => {
    const owner = await api.createUser(system.adminToken);
    const other = await api.createUser(system.adminToken);
    plan = () => ({ content: 'hi' });
    const { turn_id: turnId } = await owner.send('hello');
    expect((await other.get(`/v1/turns/${turnId}`)).status).toBe(404);
    expect((await other.get(`/v1/turns/${turnId}/events`)).status).toBe(404);
    expect((await owner.get('/v1/turns/00000000-0000-4000-8000-000000000000')).status).toBe(404);
    expect((await owner.get('/v1/turns/not-a-uuid')).status).toBe(404);
    await owner.events(turnId);
  });

  it('needs the admin token to create users', async () => {
    expect((await api.post('/v1/users', { display_name: 'x' })).status).toBe(401);
    expect((await api.as('wrong-token-wrong-token').post('/v1/users', { display_name: 'x' })).status).toBe(401);
  });
});
