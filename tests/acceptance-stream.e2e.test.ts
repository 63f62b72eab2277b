import type pg from 'pg';
import { Api, type StreamEvent } from '../scripts/lib/api';
import { injectFault, testDb } from './helpers/db';
import { afterTools, FakeModel, userText, type ChatRequestBody } from '../scripts/lib/fake-model';
import { HeldReplies, trailingUserTexts } from './helpers/held-model';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * CONTRACT §4 and §5 as a client sees them, in the combinations the other suites leave out:
 * resuming at each point of a turn, if_busy and cancel against each waiting state, the
 * iteration limit at its smallest, a budget spent in the middle of a turn.
 */
const model = new FakeModel();
const system = new TestSystem();
const held = new HeldReplies();
let db: pg.Pool;
let api: Api;
let removeFaults: () => Promise<void>;

const LONG_ANSWER = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');

beforeAll(async () => {
  await model.start();
  model.script = (body) => {
    const text = userText(body);
    if (text.startsWith('hold ') && !afterTools(body)) return held.hold(text);
    if (text.startsWith('folder ')) {
      return afterTools(body) ? { content: 'Made it.' } : { toolCalls: [{ name: 'create_folder', arguments: { name: text.slice(7) } }] };
    }
    if (text.startsWith('broken ')) {
      return afterTools(body)
        ? { content: 'Sorry.' }
        : {
            toolCalls: [
              { name: 'create_folder', arguments: { name: 'Broken box' } },
              { name: 'create_folder', arguments: { name: text.slice(7) } },
            ],
          };
    }
    if (text.startsWith('long ')) return { content: LONG_ANSWER, chunkSize: 4 };
    if (text.startsWith('tool then hold ')) {
      return afterTools(body) ? held.hold(text) : { toolCalls: [{ name: 'list_habits', arguments: {} }] };
    }
    if (text.startsWith('same ')) return { toolCalls: [{ name: 'list_habits', arguments: {} }] };
    if (text.startsWith('again ')) return { content: 'Checking once more.', toolCalls: [{ name: 'list_habits', arguments: {} }] };
    return { content: `echo: ${text}` };
  };
  db = testDb();
  removeFaults = await injectFault(
    db,
    'test_acceptance_faults',
    'folders',
    `IF NEW.name LIKE 'Broken%' THEN RAISE EXCEPTION 'injected failure'; END IF;`,
  );
  await system.start({ env: { OPENAI_BASE_URL: model.url, SSE_HEARTBEAT_MS: '300' } });
  api = new Api(system.url);
});

afterAll(async () => {
  held.releaseAll();
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await model.stop();
  await removeFaults();
  await db.end();
});

const types = (events: StreamEvent[]) => events.map((event) => event.event);
const seqs = (events: StreamEvent[]) => events.map((event) => event.data.seq);
const status = async (user: Api, turnId: string) => (await user.get(`/v1/turns/${turnId}`)).body.status as string;
const post = (user: Api, text: string, ifBusy?: string) => user.post('/v1/messages', { text, ...(ifBusy ? { if_busy: ifBusy } : {}) });
const folders = async (userId: string) =>
  (await db.query<{ name: string }>('SELECT name FROM folders WHERE user_id = $1 ORDER BY name', [userId])).rows.map((row) => row.name);

/** Reads a raw stream until `until` holds on what came so far. */
async function rawStream(user: Api, turnId: string, until: (text: string) => boolean, query = ''): Promise<string> {
  const controller = new AbortController();
  const res = await fetch(`${system.url}/v1/turns/${turnId}/events${query}`, {
    headers: { authorization: `Bearer ${user.apiKey}` },
    signal: controller.signal,
  });
  let text = '';
  const decoder = new TextDecoder();
  for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
    text += decoder.decode(chunk, { stream: true });
    if (until(text)) break;
  }
  controller.abort();
  return text;
}

describe('resuming a stream', () => {
  it('with an id from another turn, before the turn has any event: every event from seq 1', async () => {
    const user = await api.createUser(system.adminToken);
    const earlier = await user.converse('hello first');
    const running = await user.send('hold resume');
    await waitFor(() => held.isHeld('hold resume'), 'the first model call');
    const queued = await user.send('queued behind');
    expect(await status(user, queued.turn_id)).toBe('queued');
    const reading = user.events(queued.turn_id, { lastEventId: earlier.events.at(-1)?.id });
    held.release('hold resume');
    const events = await reading;
    expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
    expect(types(events)[0]).toBe('turn_started');
    expect(types(events).slice(-2)).toEqual(['message', 'done']);
    expect(events.at(-2)?.data.content).toBe('echo: queued behind');
    await user.events(running.turn_id);
  });

  it('with a malformed id: from the first event, as without one', async () => {
    const user = await api.createUser(system.adminToken);
    const { turnId, events } = await user.converse('hello malformed');
    for (const lastEventId of ['not-an-id', '12abc', '-1', '0']) {
      const again = await user.events(turnId, { lastEventId });
      expect(again.map((event) => event.id)).toEqual(events.map((event) => event.id));
    }
  });

  it('in the middle of the tokens, by header or by query: the rest once, then done', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('long answer');
    const first = await user.events(turnId, { until: (event) => event.event === 'token' });
    const rest = await user.events(turnId, { lastEventId: first.at(-1)?.id });
    const all = [...first, ...rest];
    expect(seqs(all)).toEqual(all.map((_, i) => i + 1));
    expect(
      all
        .filter((event) => event.event === 'token')
        .map((event) => event.data.delta)
        .join(''),
    ).toBe(LONG_ANSWER);
    expect(types(all).at(-1)).toBe('done');

    const query = `?last_event_id=${encodeURIComponent(String(first.at(-1)?.id))}`;
    const byQuery = await rawStream(user, turnId, (text) => text.includes('event: done'), query);
    expect([...byQuery.matchAll(/^id: (.+)$/gm)].map((match) => match[1])).toEqual(rest.map((event) => event.id));
  });

  it('after each event of a finished turn: exactly the events that follow it', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turnId, events } = await user.converse('folder Every point');
    expect(types(events)).toContain('tool_complete');
    for (const [i, event] of events.entries()) {
      const rest = await user.events(turnId, { lastEventId: event.id, timeoutMs: 5_000 });
      expect(rest.map((e) => e.id)).toEqual(events.slice(i + 1).map((e) => e.id));
    }
  });

  it('from every point at once while the turn is live: each client gets the rest once, in order', async () => {
    const user = await api.createUser(system.adminToken);
    const text = 'tool then hold live';
    const { turn_id: turnId } = await user.send(text);
    const before = await user.events(turnId, { until: (event) => event.event === 'task_update' && event.data.status === 'completed' });
    await waitFor(() => held.isHeld(text), 'the second model call');
    const readers = [undefined, ...before.map((event) => event.id)].map((lastEventId) => user.events(turnId, { lastEventId }));
    held.release(text, { content: LONG_ANSWER, chunkSize: 3 });
    const all = await user.events(turnId);
    expect(seqs(all)).toEqual(all.map((_, i) => i + 1));
    const got = await Promise.all(readers);
    for (const [i, events] of got.entries()) expect(events.map((e) => e.id)).toEqual(all.slice(i).map((e) => e.id));
  });

  it('sends a comment line while the turn waits, and closes after done', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('hold heartbeat');
    await waitFor(() => held.isHeld('hold heartbeat'), 'the model call');
    // Read until the server ends the stream.
    const seen = rawStream(user, turnId, () => false);
    const beat = await rawStream(user, turnId, (text) => /\n: [a-z]+\n\n/.test(text.slice(text.indexOf('event: turn_started'))));
    expect(beat).toContain('event: turn_started');
    held.release('hold heartbeat');
    const whole = await seen;
    expect(whole.slice(whole.lastIndexOf('\n\nid: ') + 2)).toMatch(/^id: \S+\nevent: done\ndata: .*\n\n$/);
  });

  it('lets a client at the cap that drops its stream reconnect at once with Last-Event-ID', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('hold reconnect');
    await waitFor(() => held.isHeld('hold reconnect'), 'the model call');
    const started = await user.events(turnId, { until: (event) => event.event === 'turn_started' });
    const open = async () => {
      const controller = new AbortController();
      const res = await fetch(`${system.url}/v1/turns/${turnId}/events`, {
        headers: { authorization: `Bearer ${user.apiKey}`, 'last-event-id': String(started.at(-1)?.id) },
        signal: controller.signal,
      });
      const reader = res.body?.getReader();
      if (res.status === 200) await reader?.read();
      return { status: res.status, close: () => controller.abort() };
    };
    const streams = await Promise.all(Array.from({ length: 20 }, open));
    expect(streams.map((s) => s.status)).toEqual(Array(20).fill(200));
    const statuses: number[] = [];
    for (let i = 0; i < 10; i++) {
      streams.pop()?.close();
      const next = await open();
      statuses.push(next.status);
      streams.push(next);
    }
    expect(statuses).toEqual(Array(10).fill(200));
    for (const stream of streams) stream.close();
    held.release('hold reconnect');
  });

  it('frees the slot of a stream that ended with done at once: 20 more open right after', async () => {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send('hold many');
    await waitFor(() => held.isHeld('hold many'), 'the model call');
    const readers = Array.from({ length: 20 }, () => user.events(turnId));
    await waitFor(async () => {
      const extra = await fetch(`${system.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${user.apiKey}` } });
      await extra.body?.cancel();
      return extra.status === 429;
    }, 'twenty open streams');
    held.release('hold many');
    const ended = await Promise.all(readers);
    expect(ended.map((events) => types(events).at(-1))).toEqual(Array(20).fill('done'));
    const again = await Promise.all(
      Array.from({ length: 20 }, () =>
        fetch(`${system.url}/v1/turns/${turnId}/events`, { headers: { authorization: `Bearer ${user.apiKey}` } }),
      ),
    );
    expect(again.map((res) => res.status)).toEqual(Array(20).fill(200));
    await Promise.all(again.map((res) => res.text()));
  });
});

describe('if_busy and cancel against a waiting turn', () => {
  async function awaitingApproval(name: string) {
    const user = await api.createUser(system.adminToken);
    const { turn_id: turnId } = await user.send(`folder ${name}`);
    const waiting = await user.events(turnId, { until: (event) => event.event === 'tool_approval_request' });
    await waitFor(async () => (await status(user, turnId)) === 'awaiting_approval', 'awaiting approval');
    return { user, turnId, approvalId: String(waiting.at(-1)?.data.approval_id) };
  }

  async function awaitingUser(name: string) {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turn_id: turnId } = await user.send(`broken ${name}`);
    await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    await waitFor(async () => (await status(user, turnId)) === 'awaiting_user', 'awaiting user');
    return { user, turnId };
  }

  it('reject answers 409 while the turn awaits approval, and while it awaits the user', async () => {
    const approval = await awaitingApproval('Reject me');
    const refused = await post(approval.user, 'another', 'reject');
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('session_busy');
    const asking = await awaitingUser('Reject too');
    expect((await post(asking.user, 'another', 'reject')).status).toBe(409);
  });

  it('reject answers 409 while the session has only a queued turn', async () => {
    const user = await api.createUser(system.adminToken);
    // The user's slots are taken by turns of other sessions: this session's turn waits, queued.
    const others = await Promise.all(
      Array.from({ length: 4 }, (_, i) =>
        user.post('/v1/messages', { text: `hold slot ${i}`, session_key: `agent:main:api:direct:s${i}` }),
      ),
    );
    await waitFor(() => [0, 1, 2, 3].every((i) => held.isHeld(`hold slot ${i}`)), 'four running turns');
    const queued = await user.send('waits for a slot');
    expect(await status(user, queued.turn_id)).toBe('queued');
    const refused = await post(user, 'and this', 'reject');
    expect(refused.status).toBe(409);
    for (const i of [0, 1, 2, 3]) held.release(`hold slot ${i}`);
    for (const other of others) await user.events(other.body.turn_id);
    expect(types(await user.events(queued.turn_id)).at(-1)).toBe('done');
  });

  it('interrupt while the session has only a queued turn: that turn is cancelled and the new one reads its message', async () => {
    const user = await api.createUser(system.adminToken);
    const others = await Promise.all(
      [0, 1, 2, 3].map((i) => user.post('/v1/messages', { text: `hold busy ${i}`, session_key: `agent:main:api:direct:b${i}` })),
    );
    await waitFor(() => [0, 1, 2, 3].every((i) => held.isHeld(`hold busy ${i}`)), 'four running turns');
    const queued = await user.send('first thought');
    const interrupting = await post(user, 'second thought', 'interrupt');
    expect(interrupting.status).toBe(202);
    expect((await user.events(queued.turn_id)).at(-1)?.data.status).toBe('cancelled');
    for (const i of [0, 1, 2, 3]) held.release(`hold busy ${i}`);
    for (const other of others) await user.events(other.body.turn_id);
    const events = await user.events(interrupting.body.turn_id);
    expect(events.at(-1)?.data.status).toBe('completed');
    const request = model.requests.filter((r) => userText(r.body) === 'second thought').at(-1);
    expect(trailingUserTexts(request!.body)).toEqual(['first thought', 'second thought']);
  });

  it('interrupt while awaiting approval: the approval can no longer run the tool, and the new turn answers', async () => {
    const { user, turnId, approvalId } = await awaitingApproval('Interrupted');
    const interrupting = await post(user, 'never mind', 'interrupt');
    expect(interrupting.status).toBe(202);
    const old = await user.events(turnId);
    expect(old.at(-1)?.data).toMatchObject({ type: 'done', status: 'cancelled' });
    expect(old.filter((event) => event.event === 'task_update').at(-1)?.data).toMatchObject({ status: 'skipped' });
    expect((await user.get('/v1/approvals?status=pending')).body).toEqual([]);
    const decided = await user.post(`/v1/approvals/${approvalId}`, { decision: 'approve' });
    expect(decided.status).toBe(409);
    expect((await user.events(interrupting.body.turn_id)).at(-1)?.data.status).toBe('completed');
    expect(await folders(user.userId)).toEqual([]);
  });

  it('interrupt while awaiting the user: the old turn is cancelled, continue then answers 409', async () => {
    const { user, turnId } = await awaitingUser('Left undone');
    const interrupting = await post(user, 'stop it', 'interrupt');
    expect(interrupting.status).toBe(202);
    expect((await user.events(turnId)).at(-1)?.data).toMatchObject({ status: 'cancelled' });
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: true })).status).toBe(409);
    expect((await user.events(interrupting.body.turn_id)).at(-1)?.data.status).toBe('completed');
    expect(await folders(user.userId)).toEqual([]);
  });

  it.each([
    ['autonomous', true],
    ['manual', false],
  ])(
    'interrupt while the model answers (%s mode): tool calls it sends after are neither run nor put to the user',
    async (_mode, autonomous) => {
      const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: autonomous } });
      const text = `hold stale ${String(autonomous)}`;
      const old = await user.send(text);
      await waitFor(() => held.isHeld(text), 'the model call');
      const interrupting = await post(user, 'forget it', 'interrupt');
      expect((await user.events(old.turn_id)).at(-1)?.data.status).toBe('cancelled');
      held.release(text, { toolCalls: [{ name: 'create_folder', arguments: { name: 'Ghost' } }] });
      // The call counts as one of the cancelled turn's iterations once its answer is stored.
      await waitFor(async () => (await user.get(`/v1/turns/${old.turn_id}`)).body.iterations === 1, 'the late answer stored');
      expect((await user.events(interrupting.body.turn_id)).at(-1)?.data.status).toBe('completed');
      const tasks = await db.query('SELECT status FROM tasks WHERE turn_id = $1', [old.turn_id]);
      expect(tasks.rows).toEqual([]);
      expect((await user.get('/v1/approvals?status=pending')).body).toEqual([]);
      expect(await folders(user.userId)).toEqual([]);
      expect((await user.get(`/v1/turns/${old.turn_id}`)).body.status).toBe('cancelled');
    },
  );

  it('cancel while awaiting the user skips what is left; continue and cancel then answer 409', async () => {
    const { user, turnId } = await awaitingUser('Never done');
    expect((await user.post(`/v1/turns/${turnId}/cancel`)).status).toBe(202);
    const events = await user.events(turnId);
    expect(events.at(-1)?.data).toMatchObject({ status: 'cancelled' });
    expect(events.filter((event) => event.event === 'task_update').at(-1)?.data).toMatchObject({ status: 'skipped' });
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: false })).status).toBe(409);
    expect((await user.post(`/v1/turns/${turnId}/cancel`)).status).toBe(409);
    expect(await folders(user.userId)).toEqual([]);
  });

  it('continue answers 409 to a turn awaiting approval, one running and one queued; 400 to a body without a boolean', async () => {
    const { user, turnId, approvalId } = await awaitingApproval('Not a question');
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: true })).status).toBe(409);
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: 'yes' })).status).toBe(400);
    expect((await user.post(`/v1/turns/${turnId}/continue`, {})).status).toBe(400);
    expect(await status(user, turnId)).toBe('awaiting_approval');
    expect((await user.post(`/v1/approvals/${approvalId}`, { decision: 'reject' })).status).toBe(200);
    await user.events(turnId);

    const running = await user.send('hold continue');
    await waitFor(() => held.isHeld('hold continue'), 'the model call');
    const queued = await user.send('behind it');
    expect((await user.post(`/v1/turns/${running.turn_id}/continue`, { continue: true })).status).toBe(409);
    expect((await user.post(`/v1/turns/${queued.turn_id}/continue`, { continue: true })).status).toBe(409);
    held.release('hold continue');
    expect((await user.events(queued.turn_id)).at(-1)?.data.status).toBe('completed');
  });

  it('a decision on the approval of a cancelled turn answers 409 and runs nothing', async () => {
    const { user, turnId, approvalId } = await awaitingApproval('Cancelled before approval');
    expect((await user.post(`/v1/turns/${turnId}/cancel`)).status).toBe(202);
    const decided = await user.post(`/v1/approvals/${approvalId}`, { decision: 'approve' });
    expect(decided.status).toBe(409);
    expect(decided.body.error.details).toMatchObject({ status: 'expired' });
    expect((await user.events(turnId)).at(-1)?.data.status).toBe('cancelled');
    expect(await folders(user.userId)).toEqual([]);
  });
});

describe('iteration limits', () => {
  it('max_iterations 1: one call without tools, its answer, iteration_limit, done limit_reached', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { max_iterations: 1, autonomous_mode: true } });
    const before = model.requests.length;
    const { turnId, events } = await user.converse('folder One shot');
    const calls = model.requests.slice(before);
    expect(calls).toHaveLength(1);
    expect(calls[0]?.body.tools ?? []).toEqual([]);
    expect(types(events).slice(-3)).toEqual(['message', 'iteration_limit', 'done']);
    expect(events.at(-2)?.data.max_iterations).toBe(1);
    expect(events.at(-1)?.data.status).toBe('limit_reached');
    expect(await status(user, turnId)).toBe('limit_reached');
    expect(String(events.find((event) => event.event === 'message')?.data.content).length).toBeGreaterThan(0);
  });
});

/** Tool call ids of assistant messages that no tool message answers: a real endpoint refuses such a request. */
function unansweredCalls(body: ChatRequestBody): string[] {
  const answered = new Set(body.messages.flatMap((message) => (message.role === 'tool' ? [message.tool_call_id] : [])));
  return body.messages
    .flatMap((message) => (message.tool_calls ?? []) as { id: string }[])
    .map((call) => call.id)
    .filter((id) => !answered.has(id));
}

describe('the history after a turn that ended with tool calls unanswered', () => {
  it.each([
    ['interrupted while its model answered', 'interrupt'],
    ['cancelled while its model answered', 'cancel'],
    ['at its last iteration, whose answer came with tool calls anyway', 'limit'],
  ])('%s: the next request answers every tool call it shows', async (_case, how) => {
    const user = await api.createUser(system.adminToken, {
      preferences: { autonomous_mode: true, ...(how === 'limit' ? { max_iterations: 1 } : {}) },
    });
    const text = `hold dangling ${how}`;
    const old = await user.send(text);
    await waitFor(() => held.isHeld(text), 'the model call');
    const calls = { toolCalls: [{ name: 'list_habits', arguments: {} }] };
    if (how === 'limit') held.release(text, { content: 'Partly.', ...calls });
    else {
      if (how === 'interrupt') expect((await post(user, 'next please', 'interrupt')).status).toBe(202);
      else expect((await user.post(`/v1/turns/${old.turn_id}/cancel`)).status).toBe(202);
      held.release(text, calls);
      await waitFor(async () => (await user.get(`/v1/turns/${old.turn_id}`)).body.iterations === 1, 'the late answer stored');
    }
    await user.events(old.turn_id);
    const next = await user.converse('after dangling');
    expect(next.events.at(-1)?.data.status).toBe(how === 'limit' ? 'limit_reached' : 'completed');
    const request = model.requests.filter((r) => userText(r.body) === 'after dangling').at(-1);
    expect(request?.raw).toContain(text);
    expect(unansweredCalls(request!.body)).toEqual([]);
  });
});

describe('answers written by the system', () => {
  const streamedText = (events: StreamEvent[]) =>
    events
      .filter((event) => event.event === 'token')
      .map((event) => event.data.delta)
      .join('');

  it('three identical calls: the explanation streams as tokens, then message and done limit_reached', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { events } = await user.converse('same again');
    const message = String(events.find((event) => event.event === 'message')?.data.content);
    expect(message).toMatch(/list_habits/);
    expect(streamedText(events)).toBe(message);
    expect(types(events).slice(-3)).toEqual(['token', 'message', 'done']);
    expect(events.at(-1)?.data.status).toBe('limit_reached');
  });

  it('three identical calls with text beside them: tokens, message and history all hold the text and the explanation', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { events } = await user.converse('again please');
    const message = String(events.find((event) => event.event === 'message')?.data.content);
    expect(message).toMatch(/^Checking once more\.\n\nI stopped: .*list_habits/s);
    // The two steps before streamed their text too: the answer is what the last one streamed.
    expect(streamedText(events)).toBe(`Checking once more.Checking once more.${message}`);
    const stored = (await user.get('/v1/sessions/agent:main:main/messages')).body as { role: string; content: string }[];
    expect(stored.filter((row) => row.role === 'assistant').at(-1)?.content).toBe(message);
  });

  it('continue false: the reply streams as tokens, then message and done completed', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const { turn_id: turnId } = await user.send('broken Stop here');
    const asked = await user.events(turnId, { until: (event) => event.event === 'ask_user_continue' });
    await waitFor(async () => (await status(user, turnId)) === 'awaiting_user', 'awaiting user');
    expect((await user.post(`/v1/turns/${turnId}/continue`, { continue: false })).status).toBe(202);
    const rest = await user.events(turnId, { lastEventId: asked.at(-1)?.id });
    const message = String(rest.find((event) => event.event === 'message')?.data.content);
    expect(message).toMatch(/Stopped as you asked/);
    expect(streamedText(rest)).toBe(message);
    expect(types(rest).slice(-3)).toEqual(['token', 'message', 'done']);
    expect(rest.at(-1)?.data.status).toBe('completed');
  });
});

describe('budget_exhausted', () => {
  it('spent in the middle of a turn: error, then done failed, and no further model call', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { autonomous_mode: true } });
    const admin = api.as(system.adminToken);
    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { daily_token_budget: 10 })).status).toBe(200);
    const before = model.requests.length;
    const { events } = await user.converse('folder Over budget');
    expect(model.requests.length - before).toBe(1);
    expect(types(events).slice(-2)).toEqual(['error', 'done']);
    expect(events.at(-2)?.data.code).toBe('budget_exhausted');
    expect(events.at(-1)?.data.status).toBe('failed');
    expect(seqs(events)).toEqual(events.map((_, i) => i + 1));
  });
});

// Last, over every turn above: cancels, interrupts, limits, loops and refusals included.
it('never showed the model a tool call without its result', () => {
  expect(model.requests.length).toBeGreaterThan(20);
  for (const request of model.requests) expect(unansweredCalls(request.body)).toEqual([]);
});
