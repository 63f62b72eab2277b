import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { Api, UUID } from '../scripts/lib/api';
import { testDb } from './helpers/db';
import { afterTools, byUserText, FakeModel, userText, type ChatRequestBody } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/**
 * What a model sends is untrusted input (docs/agent.md#untrusted-model-output): broken, huge or hostile tool calls fail
 * their own task and the turn goes on; nothing of them grows storage, metrics or the next prompt
 * without bound; the provider's error text never reaches the user.
 */
const model = new FakeModel();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;
const PROVIDER_SECRET = 'sk-proj-Zz9SecretKeyLeak0123456789';
const HUGE = 'x'.repeat(5 * 1024 * 1024);
const STALLED_ANSWER = 'An answer that arrives whole on the second call.';
const MODEL_TIMEOUT_MS = 3_000;

beforeAll(async () => {
  await model.start();
  model.script = byUserText({
    'hostile calls': (body) =>
      afterTools(body)
        ? { content: 'Done what could be done.' }
        : {
            toolCalls: [
              { name: 'create_folder', arguments: '{"name": "Broken"' },
              { name: 'create_folder', arguments: '["Work"]' },
              { name: 'create_folder', arguments: JSON.stringify({ name: HUGE }) },
              { name: 'create_folder', arguments: '{"name":"Nul\\u0000Folder"}' },
              { name: 'create_folder', arguments: `{"name":${'['.repeat(5_000)}${']'.repeat(5_000)}}` },
              { name: 'drop_all_tables_now', arguments: {} },
              { name: `invented_${'z'.repeat(300)}`, arguments: {} },
              { name: 'create_folder', arguments: { name: 'Valid' } },
            ],
          },
    'many calls': (body) =>
      afterTools(body)
        ? { content: 'Some were not run.' }
        : { toolCalls: Array.from({ length: 6 }, (_, i) => ({ name: 'create_folder', arguments: { name: `Many ${i + 1}` } })) },
    'many twice': () =>
      requestsOf('many twice').length > 2
        ? { content: 'Twice too many.' }
        : { toolCalls: Array.from({ length: 5 }, (_, i) => ({ name: 'list_habits', arguments: { page: i } })) },
    // More calls than one job may carry the keys of the events they make (each not-run call has its own).
    'flood of calls': (body) =>
      afterTools(body)
        ? { content: 'Most were not run.' }
        : { toolCalls: Array.from({ length: 1_200 }, (_, i) => ({ name: 'list_habits', arguments: { page: i } })) },
    // A server that numbers its calls anew in every answer: each step's call has the same id.
    'same ids': (body) => {
      const steps = body.messages.slice(body.messages.findLastIndex((m) => m.role === 'user')).filter((m) => m.role === 'assistant');
      return steps.length < 2
        ? { toolCalls: [{ name: 'list_habits', arguments: { page: steps.length + 1 }, id: 'call_0' }] }
        : { content: 'Listed twice.' };
    },
    // Some OpenAI-compatible servers make their call ids of a UUID.
    'uuid call ids': (body) =>
      afterTools(body) ? { content: 'Listed.' } : { toolCalls: [{ name: 'list_habits', arguments: {}, id: `call_${randomUUID()}` }] },
    'nul answer': () => ({ content: 'hello\u0000 world' }),
    'huge answer': () => ({ content: 'q'.repeat(100_010), chunkSize: 10_000 }),
    'blank answer': (body) => (afterTools(body) ? { content: ' ' } : { toolCalls: [{ name: 'get_folder_contents', arguments: {} }] }),
    // Usage is the endpoint's word too: counts out of the columns' range, fractions, negatives.
    'odd usage': () => ({
      content: 'Counted.',
      usage: { prompt_tokens: 3_000_000_000, completion_tokens: 2.5, cached_tokens: 4_000_000_000 },
    }),
    'negative usage': () => ({ content: 'Given back?', usage: { prompt_tokens: -1_000_000, completion_tokens: -5 } }),
    // The first call sends a few chunks, then nothing more on a connection it keeps open.
    stalled: (body) =>
      model.requests.filter((r) => userText(r.body) === userText(body)).length === 1
        ? { content: STALLED_ANSWER, chunkSize: 3, stallAfterChunks: 2 }
        : { content: STALLED_ANSWER, chunkSize: 3 },
    // A provider's rate limit: more refusals in a row than a step has attempts, each naming its pause.
    throttled: (body) =>
      model.requests.filter((r) => userText(r.body) === userText(body)).length <= 6
        ? { status: 429, content: 'Rate limit reached for requests', headers: { 'retry-after-ms': '200' } }
        : { content: 'Answered once the limit passed.' },
    'bad key': () => ({ status: 401, content: `Incorrect API key provided: ${PROVIDER_SECRET}. You can find your API key at …` }),
  });
  db = testDb();
  await system.start({ env: { OPENAI_BASE_URL: model.url, MAX_TOOL_CALLS_PER_STEP: '4', MODEL_TIMEOUT_MS: String(MODEL_TIMEOUT_MS) } });
  api = new Api(system.url);
});

afterAll(async () => {
  await system.stop();
  await model.stop();
  await db.end();
});

async function autonomousUser() {
  return api.createUser(system.adminToken, { name: 'Mallory', preferences: { autonomous_mode: true } });
}

const requestsOf = (text: string): ChatRequestBody[] =>
  model.requests.filter((r) => r.body.messages.some((m) => m.role === 'user' && String(m.content).startsWith(text))).map((r) => r.body);

describe('model output is untrusted', () => {
  it('turns broken, huge, NUL, deep and unknown calls into failed tasks the model is told about, and goes on', async () => {
    const user = await autonomousUser();
    const { turnId, events } = await user.converse('hostile calls');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });

    const tasks = await db.query<{ ref: string; status: string; failure: string | null; size: number; tool_name: string }>(
      `SELECT ref, status, failure, length(arguments::text) + length(COALESCE(result, '')) AS size, tool_name
       FROM tasks WHERE turn_id = $1 ORDER BY position`,
      [turnId],
    );
    expect(tasks.rows.map((t) => [t.status, t.failure])).toEqual([
      ...Array.from({ length: 7 }, () => ['failed', 'invalid']),
      ['completed', null],
    ]);
    // Stored as bounded placeholders, never the model's raw text.
    for (const task of tasks.rows) expect(task.size).toBeLessThan(2_000);
    const stored = await db.query<{ size: number }>(
      `SELECT COALESCE(SUM(length(content) + length(COALESCE(tool_calls::text, ''))), 0)::int AS size FROM messages WHERE turn_id = $1`,
      [turnId],
    );
    expect(stored.rows[0]?.size).toBeLessThan(20_000);

    // Every failure reached the model as a success:false result, in a prompt of bounded size.
    const followUp = model.requests.find((r) => r.body.messages.at(-1)?.role === 'tool' && r.raw.includes('hostile calls'));
    expect(followUp?.raw.length).toBeLessThan(100_000);
    const results = (followUp?.body.messages ?? []).filter((m) => m.role === 'tool').map((m) => JSON.parse(String(m.content)));
    expect(results).toHaveLength(8);
    expect(results.slice(0, 7).every((r: { success: boolean }) => r.success === false)).toBe(true);
    expect(results.map((r: { error?: string }) => r.error ?? '').join('\n')).toMatch(
      /not valid JSON[\s\S]*not a JSON object[\s\S]*over the limit[\s\S]*NUL[\s\S]*deeper[\s\S]*no tool named/,
    );
    expect(results[7]).toMatchObject({ success: true });

    const updates = events.filter((e) => e.event === 'task_update' && e.data.status === 'failed');
    expect(updates).toHaveLength(7);
    const folders = await db.query<{ name: string }>(`SELECT name FROM folders WHERE user_id = $1`, [user.userId]);
    expect(folders.rows.map((f) => f.name)).toEqual(['Valid']);

    // Invented tool names count under one label, never as series of their own.
    const metrics = await (await fetch(`${system.url}/metrics`)).text();
    expect(metrics).not.toMatch(/drop_all_tables_now|invented_z/);
    expect(metrics).toMatch(/assistant_tool_calls_total\{outcome="invalid",tool="other"\} 2/);
  });

  it('runs at most MAX_TOOL_CALLS_PER_STEP calls of one step; the others are answered "not run"', async () => {
    const user = await autonomousUser();
    const { turnId, events } = await user.converse('many calls');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    const tasks = await db.query<{ status: string }>('SELECT status FROM tasks WHERE turn_id = $1 ORDER BY position', [turnId]);
    expect(tasks.rows.map((t) => t.status)).toEqual(['completed', 'completed', 'completed', 'completed', 'skipped', 'skipped']);
    const folders = await db.query(`SELECT 1 FROM folders WHERE user_id = $1`, [user.userId]);
    expect(folders.rowCount).toBe(4);
    const last = requestsOf('many calls').at(-1);
    const notRun = (last?.messages ?? []).filter((m) => m.role === 'tool' && String(m.content).includes('Not run'));
    expect(notRun).toHaveLength(2);
    expect(notRun.every((m) => JSON.parse(String(m.content)).success === false)).toBe(true);
  });

  it('goes on after a step of more than a thousand calls, telling the model of each', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('flood of calls');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    const results = (requestsOf('flood of calls').at(-1)?.messages ?? []).filter((m) => m.role === 'tool');
    expect(results).toHaveLength(1_200);
    expect(events.filter((e) => e.event === 'task_update' && e.data.status === 'skipped')).toHaveLength(1_196);
  });

  it('tells the model which call of its step was not run, in a later step too', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('many twice');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    const notRun = (requestsOf('many twice').at(-1)?.messages ?? [])
      .filter((m) => m.role === 'tool' && String(m.content).includes('Not run'))
      .map((m) => JSON.parse(String(m.content)).error);
    expect(notRun).toEqual([
      'Not run: at most 4 tool calls of one step run, and this was call 5 of the step.',
      'Not run: at most 4 tool calls of one step run, and this was call 5 of the step.',
    ]);
  });

  it('shows the model each call id once, when a server repeats its ids across steps and turns', async () => {
    const user = await autonomousUser();
    for (const text of ['same ids, first turn', 'same ids, second turn']) {
      const { events } = await user.converse(text);
      expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    }
    const last = requestsOf('same ids, second turn').at(-1)?.messages ?? [];
    const callIds = last.flatMap((m) => (m.tool_calls ?? []) as { id: string }[]).map((call) => call.id);
    expect(callIds).toHaveLength(4);
    expect(new Set(callIds).size).toBe(4);
    // Each result still answers its own call.
    expect(last.filter((m) => m.role === 'tool').map((m) => m.tool_call_id)).toEqual(callIds);
  });

  it("shows the model no UUID a server made its call ids of, in this turn's later requests or the next turn's", async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('uuid call ids');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    await user.converse('nul answer');
    const later = model.requests.filter((r) => r.raw.includes('uuid call ids')).slice(1);
    expect(later).toHaveLength(2);
    for (const request of later) expect(request.raw).not.toMatch(UUID);
  });

  const streamedText = (events: { event: string; data: Record<string, unknown> }[]) =>
    events
      .filter((e) => e.event === 'token')
      .map((e) => e.data.delta)
      .join('');

  it('stores and streams an answer holding a NUL character without it', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('nul answer');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(events.find((e) => e.event === 'message')?.data.content).toBe('hello world');
    expect(streamedText(events)).toBe('hello world');
  });

  it('streams an answer cut past 100,000 characters as it is stored, with the note of the cut', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('huge answer');
    const message = String(events.find((e) => e.event === 'message')?.data.content);
    expect(message).toMatch(/^q{100000}\n\n\[… the rest of this answer was cut/);
    expect(streamedText(events)).toBe(message);
  });

  it('answers in its own words when the model answers nothing, so a chat user is not left with silence', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('blank answer');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    const content = String(events.find((e) => e.event === 'message')?.data.content);
    expect(content).toMatch(/no answer/);
    // Streamed like the model's own text: the tokens add up to the message.
    const tokens = events.filter((e) => e.event === 'token').map((e) => String(e.data.delta));
    expect(tokens.join('').trim()).toBe(content);
  });

  it('counts a call whose usage report is out of range or not counts, and the turn goes on', async () => {
    const user = await autonomousUser();
    const odd = await user.converse('odd usage');
    expect(odd.events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    const usage = await user.get('/v1/usage?days=1');
    // Rounded, capped at a billion a count (the budget's sum stays within PostgreSQL's INTEGER), cached within the prompt.
    expect(usage.body.days[0]).toMatchObject({ prompt_tokens: 1_000_000_000, cached_prompt_tokens: 1_000_000_000, completion_tokens: 3 });

    const fresh = await autonomousUser();
    const negative = await fresh.converse('negative usage');
    expect(negative.events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    // Not counts: the call is estimated, as one from a server that reports no usage; no tokens are given back.
    const spent = await fresh.get('/v1/usage?days=1');
    expect(spent.body.days[0].prompt_tokens).toBeGreaterThan(0);
    expect(spent.body.budget.used_today).toBeGreaterThan(0);
  });

  it('waits out a model endpoint that refuses calls for load (429 with its pause), past the attempts of a failure', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('throttled');
    expect(events.map((event) => event.event)).not.toContain('error');
    expect(events.at(-2)?.data).toMatchObject({ type: 'message', content: 'Answered once the limit passed.' });
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(requestsOf('throttled')).toHaveLength(7);
  });

  it("tells the user the model endpoint refused, in our words; the provider's text goes to the logs without the key", async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('bad key');
    const error = events.find((e) => e.event === 'error');
    expect(error?.data).toMatchObject({ code: 'model_error', message: expect.stringMatching(/^The model endpoint refused the request/) });
    expect(String(error?.data.message)).not.toMatch(/Incorrect API key|sk-/);
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'failed' });
    const logs = system.logs.join('');
    expect(logs).toMatch(/Incorrect API key provided/);
    expect(logs).not.toContain(PROVIDER_SECRET);
  });

  it('gives up on a model call that stops sending in mid-answer after MODEL_TIMEOUT_MS, and calls the model again', async () => {
    const user = await autonomousUser();
    const { events } = await user.converse('stalled answer');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    expect(events.find((e) => e.event === 'message')?.data.content).toBe(STALLED_ANSWER);
    // What the first call streamed is not streamed again.
    expect(
      events
        .filter((e) => e.event === 'token')
        .map((e) => String(e.data.delta))
        .join(''),
    ).toBe(STALLED_ANSWER);
    expect(requestsOf('stalled answer')).toHaveLength(2);
  });
});
