import pg from 'pg';
import { randomUUID } from 'node:crypto';
import { createClientRedis, SharedMetrics, usageByDay, type ModelUsage, type Redis } from '@assistant/shared';
import type { ChatModel, ChatRequest, ChatResponse } from '../llm/chat-model';
import { OfflinePlanner } from '../llm/offline.planner';
import { DIGEST_INSTRUCTIONS } from './digest-transcript';
import { DigestConflictError, digestSession, type DigestDeps } from './session-digest';

let pool: pg.Pool;
let redis: Redis;
let metrics: SharedMetrics;

beforeAll(() => {
  pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
  redis = createClientRedis(process.env.REDIS_URL as string);
  metrics = new SharedMetrics(redis, `digest-test-${randomUUID()}`);
});

afterAll(async () => {
  await metrics.flush();
  await redis.del(metrics.key);
  await redis.quit();
  await pool.end();
});

/** A model that answers with `reply` (or throws it) and records what it was asked. */
class ScriptedModel implements ChatModel {
  readonly name = 'scripted';
  readonly requests: ChatRequest[] = [];
  constructor(
    public reply: (request: ChatRequest) => Promise<string> | string,
    public usage?: ModelUsage,
  ) {}
  async complete(request: ChatRequest): Promise<ChatResponse> {
    this.requests.push(request);
    return { content: await this.reply(request), toolCalls: [], ...(this.usage ? { usage: this.usage } : {}) };
  }
}

const NOW = new Date('2026-02-16T14:05:30Z');

function deps(model: ChatModel, dailyTokenBudget = 0): DigestDeps {
  return {
    db: pool,
    model,
    metrics,
    defaultModel: 'test-model',
    modelAllowlist: undefined,
    idleSeconds: 60,
    dailyTokenBudget,
    now: () => NOW,
  };
}

async function newSession(key = 'agent:main:main'): Promise<{ userId: string; sessionId: string }> {
  const user = await pool.query<{ id: string }>("INSERT INTO users (display_name) VALUES ('Digest') RETURNING id");
  const userId = (user.rows[0] as { id: string }).id;
  await pool.query('INSERT INTO user_preferences (user_id) VALUES ($1)', [userId]);
  await pool.query('INSERT INTO agent_memory_profiles (user_id, memory_content) VALUES ($1, $2)', [userId, 'Prefers tea.']);
  const session = await pool.query<{ id: string }>('INSERT INTO sessions (user_id, session_key) VALUES ($1, $2) RETURNING id', [
    userId,
    key,
  ]);
  return { userId, sessionId: (session.rows[0] as { id: string }).id };
}

async function say(sessionId: string, role: 'user' | 'assistant', content: string): Promise<void> {
  await pool.query('INSERT INTO messages (session_id, role, content) VALUES ($1, $2, $3)', [sessionId, role, content]);
}

/** Moves the session's activity two minutes back: idle for a 60 s idle time. */
async function quiet(sessionId: string): Promise<void> {
  await pool.query(`UPDATE sessions SET last_activity_at = NOW() - interval '2 minutes' WHERE id = $1`, [sessionId]);
  await pool.query(`UPDATE messages SET created_at = NOW() - interval '2 minutes' WHERE session_id = $1`, [sessionId]);
}

async function memory(userId: string): Promise<string> {
  const found = await pool.query<{ memory_content: string }>('SELECT memory_content FROM agent_memory_profiles WHERE user_id = $1', [
    userId,
  ]);
  return found.rows[0]?.memory_content ?? '';
}

async function digestedUntil(sessionId: string): Promise<number> {
  const found = await pool.query<{ digested_until: number }>('SELECT digested_until FROM sessions WHERE id = $1', [sessionId]);
  return found.rows[0]?.digested_until ?? -1;
}

describe('digestSession', () => {
  it('waits while the session is in use: recent messages, or a turn in progress', async () => {
    const model = new ScriptedModel(() => 'never');
    const { userId, sessionId } = await newSession();
    await say(sessionId, 'user', 'hello');
    const outcome = await digestSession(deps(model), sessionId, { force: false });
    expect(outcome).toMatchObject({ kind: 'not-idle' });
    expect(outcome.kind === 'not-idle' && outcome.retryInMs).toBeGreaterThan(55_000);

    await quiet(sessionId);
    await pool.query(
      `INSERT INTO turns (user_id, session_id, session_key, input, status) VALUES ($1, $2, 'agent:main:main', 'x', 'awaiting_approval')`,
      [userId, sessionId],
    );
    expect(await digestSession(deps(model), sessionId, { force: false })).toEqual({ kind: 'not-idle', retryInMs: 60_000 });
    expect(model.requests).toHaveLength(0);
  });

  it('appends the summary under a dated heading and moves the mark; a second run finds nothing new', async () => {
    const model = new ScriptedModel(() => 'Ana planned her garden.\n- Ana grows tomatoes.');
    const { userId, sessionId } = await newSession();
    await say(sessionId, 'user', 'I grow tomatoes by the south wall');
    await say(sessionId, 'assistant', 'Noted!');
    await quiet(sessionId);

    expect(await digestSession(deps(model), sessionId, { force: false })).toEqual({ kind: 'digested', rounds: 1 });
    expect(await memory(userId)).toBe(
      'Prefers tea.\n\n### Session digest 2026-02-16 14:05 UTC (agent:main:main)\nAna planned her garden.\n- Ana grows tomatoes.',
    );
    const lastId = await pool.query<{ max: number }>('SELECT MAX(id) AS max FROM messages WHERE session_id = $1', [sessionId]);
    expect(await digestedUntil(sessionId)).toBe(lastId.rows[0]?.max);
    const request = model.requests[0] as ChatRequest;
    expect(request).toMatchObject({ model: 'test-model', tools: [] });
    expect(request.messages[0]).toEqual({ role: 'system', content: DIGEST_INSTRUCTIONS });
    expect(request.messages[1]?.content).toBe(
      'Transcript of session agent:main:main:\n\nUser: I grow tomatoes by the south wall\nAssistant: Noted!',
    );

    expect(await digestSession(deps(model), sessionId, { force: false })).toEqual({ kind: 'nothing-new' });
    expect(await digestSession(deps(model), sessionId, { force: true })).toEqual({ kind: 'nothing-new' });
    expect(model.requests).toHaveLength(1);

    await say(sessionId, 'user', 'and basil');
    await quiet(sessionId);
    model.reply = () => 'Added basil.';
    await digestSession(deps(model), sessionId, { force: false });
    expect(model.requests[1]?.messages[1]?.content).toBe('Transcript of session agent:main:main:\n\nUser: and basil');
    expect((await memory(userId)).match(/### Session digest/g)).toHaveLength(2);
  });

  it('loses nothing when the model fails: the mark stays, and the retry digests the same messages', async () => {
    const model = new ScriptedModel(() => {
      throw new Error('model down');
    });
    const { userId, sessionId } = await newSession();
    await say(sessionId, 'user', 'remember the dentist on Friday');
    await quiet(sessionId);
    await expect(digestSession(deps(model), sessionId, { force: false })).rejects.toThrow('model down');
    expect(await digestedUntil(sessionId)).toBe(0);
    expect(await memory(userId)).toBe('Prefers tea.');

    model.reply = () => '   ';
    await expect(digestSession(deps(model), sessionId, { force: false })).rejects.toThrow('empty digest');
    expect(await digestedUntil(sessionId)).toBe(0);

    model.reply = () => 'Dentist on Friday.';
    await digestSession(deps(model), sessionId, { force: false });
    expect(model.requests.at(-1)?.messages[1]?.content).toContain('User: remember the dentist on Friday');
    expect(await memory(userId)).toContain('Dentist on Friday.');
  });

  it('digests a long session in rounds, each within the transcript limit, up to the last message', async () => {
    const model = new ScriptedModel((request) => `Round of ${String(request.messages[1]?.content.length)} characters.`);
    const { userId, sessionId } = await newSession();
    for (let i = 0; i < 60; i++) await say(sessionId, 'user', `${i} ${'y'.repeat(1_200)}`);
    expect(await digestSession(deps(model), sessionId, { force: true })).toEqual({ kind: 'digested', rounds: 2 });
    expect(model.requests).toHaveLength(2);
    expect((await memory(userId)).match(/### Session digest/g)).toHaveLength(2);
    const lastId = await pool.query<{ max: number }>('SELECT MAX(id) AS max FROM messages WHERE session_id = $1', [sessionId]);
    expect(await digestedUntil(sessionId)).toBe(lastId.rows[0]?.max);
  });

  it('refuses to commit over another digest that committed meanwhile', async () => {
    const { userId, sessionId } = await newSession();
    await say(sessionId, 'user', 'something');
    await quiet(sessionId);
    const model = new ScriptedModel(async () => {
      await pool.query('UPDATE sessions SET digested_until = digested_until + 1 WHERE id = $1', [sessionId]);
      return 'late summary';
    });
    await expect(digestSession(deps(model), sessionId, { force: false })).rejects.toBeInstanceOf(DigestConflictError);
    expect(await memory(userId)).toBe('Prefers tea.');
  });

  it('digests at once on reset, and any archived session whatever the reason', async () => {
    const model = new ScriptedModel(() => 'Reset summary.');
    const first = await newSession('agent:main:telegram:direct:42');
    await say(first.sessionId, 'user', 'just now');
    expect(await digestSession(deps(model), first.sessionId, { force: true })).toEqual({ kind: 'digested', rounds: 1 });
    expect(await memory(first.userId)).toContain('### Session digest 2026-02-16 14:05 UTC (agent:main:telegram:direct:42)\nReset summary.');

    const second = await newSession();
    await say(second.sessionId, 'user', 'just now too');
    await pool.query('UPDATE sessions SET archived_at = NOW() WHERE id = $1', [second.sessionId]);
    expect(await digestSession(deps(model), second.sessionId, { force: false })).toEqual({ kind: 'digested', rounds: 1 });
  });

  it("dates the digest's heading in the user's time zone, with its name: a late evening in São Paulo is not tomorrow", async () => {
    const late = new Date('2026-02-17T01:30:00Z');
    const { userId, sessionId } = await newSession();
    await pool.query("UPDATE user_preferences SET timezone = 'America/Sao_Paulo' WHERE user_id = $1", [userId]);
    await say(sessionId, 'user', 'good night');
    await digestSession({ ...deps(new ScriptedModel(() => 'Said good night.')), now: () => late }, sessionId, { force: true });
    expect(await memory(userId)).toContain('### Session digest 2026-02-16 22:30 America/Sao_Paulo (agent:main:main)\nSaid good night.');
  });

  it('with the offline planner, keeps an extract of the conversation instead of its help text', async () => {
    const { userId, sessionId } = await newSession();
    await say(sessionId, 'user', 'create folder Work');
    await say(sessionId, 'assistant', 'Folder "Work" created [ID: folder_1].');
    await digestSession(deps(new OfflinePlanner()), sessionId, { force: true });
    const text = await memory(userId);
    expect(text).toContain('User: create folder Work');
    expect(text).not.toContain('offline planner');
  });

  it("names things instead of copying the session's refs into MEMORY, where the next session's document_1 is another one", async () => {
    const { userId, sessionId } = await newSession();
    const documents = await pool.query<{ id: string }>(
      `INSERT INTO documents (id, user_id, title, title_key)
       VALUES (gen_random_uuid(), $1, 'Alpha plan', 'alpha plan'), (gen_random_uuid(), $1, 'Gone', 'gone') RETURNING id`,
      [userId],
    );
    const [alpha, gone] = documents.rows.map((row) => row.id);
    await pool.query(
      `INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'document', 1, $2), ($1, 'document', 2, $3)`,
      [sessionId, alpha, gone],
    );
    await pool.query('DELETE FROM documents WHERE id = $1', [gone]);
    await say(sessionId, 'user', 'open document_1 and drop document_2; my habit goal_2026 stays');
    await pool.query(`INSERT INTO messages (session_id, role, content, tool_calls) VALUES ($1, 'assistant', '', $2)`, [
      sessionId,
      JSON.stringify([{ id: 'c1', name: 'delete_document', arguments: '{"document_id":"document_2"}' }]),
    ]);
    await say(sessionId, 'assistant', 'Opened "Alpha plan" [ID: document_1].');
    // A model summarising faithfully repeats what the transcript names things by.
    const model = new ScriptedModel((request) => `Echo: ${String(request.messages[1]?.content)} (see document_1)`);
    await digestSession(deps(model), sessionId, { force: true });
    const transcript = String(model.requests[0]?.messages[1]?.content);
    expect(transcript).toBe(
      'Transcript of session agent:main:main:\n\n' +
        'User: open Alpha plan and drop a deleted document; my habit goal_2026 stays\n' +
        'Assistant called: delete_document {"document_id":"a deleted document"}\n' +
        'Assistant: Opened "Alpha plan".',
    );
    const text = await memory(userId);
    expect(text).not.toMatch(/document_\d/);
    expect(text).toContain('(see Alpha plan)');

    const offline = await newSession();
    await say(offline.sessionId, 'assistant', 'Folder "Work" created [ID: folder_1].');
    await digestSession(deps(new OfflinePlanner()), offline.sessionId, { force: true });
    expect(await memory(offline.userId)).toContain('Assistant: Folder "Work" created.');
  });

  it("counts each model call in the user's usage and budget once, even when another digest committed first", async () => {
    const model = new ScriptedModel(() => 'Garden plans.', { promptTokens: 120, cachedPromptTokens: 20, completionTokens: 30 });
    const { userId, sessionId } = await newSession();
    await say(sessionId, 'user', 'I grow tomatoes');
    await digestSession(deps(model), sessionId, { force: true });
    expect(await digestSession(deps(model), sessionId, { force: true })).toEqual({ kind: 'nothing-new' });
    const [today] = await usageByDay(pool, userId, 1);
    expect(today).toMatchObject({ turns: 0, model_calls: 1 });
    expect([today?.prompt_tokens, today?.cached_prompt_tokens, today?.completion_tokens].map(Number)).toEqual([120, 20, 30]);

    // A call whose summary another digest beat to MEMORY was made all the same; the retry's is another.
    await say(sessionId, 'user', 'and basil');
    model.reply = async () => {
      await pool.query('UPDATE sessions SET digested_until = digested_until + 1 WHERE id = $1', [sessionId]);
      return 'late summary';
    };
    await expect(digestSession(deps(model), sessionId, { force: true })).rejects.toBeInstanceOf(DigestConflictError);
    expect((await usageByDay(pool, userId, 1))[0]).toMatchObject({ model_calls: 2 });

    // A server that reports no usage is counted at an estimate, as a turn's call is.
    const silent = await newSession();
    await say(silent.sessionId, 'user', 'x'.repeat(4_000));
    await digestSession(deps(new ScriptedModel(() => 'Long message.')), silent.sessionId, { force: true });
    const [estimated] = await usageByDay(pool, silent.userId, 1);
    expect(Number(estimated?.prompt_tokens)).toBeGreaterThan(200);
  });

  it('counts its model calls in /metrics, as a turn step does', async () => {
    const calls = SharedMetrics.counter('assistant_model_calls_total', { outcome: 'success' });
    const prompt = SharedMetrics.counter('assistant_model_tokens_total', { kind: 'prompt' });
    await metrics.flush();
    const before = await redis.hmget(metrics.key, calls, prompt);
    const { sessionId } = await newSession();
    await say(sessionId, 'user', 'I grow tomatoes');
    const model = new ScriptedModel(() => 'Garden plans.', { promptTokens: 120, completionTokens: 30 });
    await digestSession(deps(model), sessionId, { force: true });
    await metrics.flush();
    const after = await redis.hmget(metrics.key, calls, prompt);
    expect(after.map((value, i) => Number(value) - Number(before[i]))).toEqual([1, 120]);
  });

  it('makes no model call past the daily token budget and keeps the messages for the next day', async () => {
    const model = new ScriptedModel(() => 'Dentist on Friday.', { promptTokens: 100, completionTokens: 10 });
    const { userId, sessionId } = await newSession();
    await say(sessionId, 'user', 'remember the dentist on Friday');
    await pool.query('INSERT INTO model_usage (session_id, user_id, prompt_tokens, completion_tokens) VALUES ($1, $2, 900, 100)', [
      sessionId,
      userId,
    ]);
    const outcome = await digestSession(deps(model, 1_000), sessionId, { force: true });
    expect(outcome).toEqual({ kind: 'over-budget', retryInMs: Date.UTC(2026, 1, 17) - NOW.getTime() });
    expect(model.requests).toHaveLength(0);
    expect(await digestedUntil(sessionId)).toBe(0);
    expect(await memory(userId)).toBe('Prefers tea.');

    await pool.query('UPDATE users SET daily_token_budget = 2000 WHERE id = $1', [userId]);
    expect(await digestSession(deps(model, 1_000), sessionId, { force: true })).toEqual({ kind: 'digested', rounds: 1 });
    expect(await memory(userId)).toContain('Dentist on Friday.');
  });

  it('answers gone for a session that no longer exists', async () => {
    const model = new ScriptedModel(() => 'x');
    expect(await digestSession(deps(model), '00000000-0000-4000-8000-000000000000', { force: true })).toEqual({ kind: 'gone' });
  });
});
