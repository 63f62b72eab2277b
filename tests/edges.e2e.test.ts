import { z } from 'zod';
import { Api } from '../scripts/lib/api';
import { approvalResponse, sessionMessageResponse, sessionResponse } from '../services/gateway/src/openapi/api-schemas';
import { afterTools, FakeModel, userText, type ChatRequestBody } from '../scripts/lib/fake-model';
import { testDb } from './helpers/db';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * The edges of the API against careless and hostile clients (docs/api.md#errors, docs/events.md): input the system
 * will not store, open streams per user, rate limits on what a user creates, the model allowlist,
 * a new user's empty main session.
 */
const model = new FakeModel();
const system = new TestSystem();
let api: Api;

beforeAll(async () => {
  await model.start();
  // Every message plans one change, so in manual mode its turn waits for approval with its stream open.
  model.script = (body) =>
    isDigest(body)
      ? { content: 'Digest.' }
      : afterTools(body)
        ? { content: 'Done.' }
        : { toolCalls: [{ name: 'create_folder', arguments: { name: userText(body) } }] };
  // A heartbeat a second: an erased user's open stream ends within one.
  await system.start({ env: { OPENAI_BASE_URL: model.url, MODEL_ALLOWLIST: 'gpt-4o-mini, gpt-4o', SSE_HEARTBEAT_MS: '1000' } });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await model.stop();
});

const isDigest = (body: ChatRequestBody) => String(body.messages[0]?.content).startsWith('You write session digests');
const nested = (depth: number) => '['.repeat(depth) + ']'.repeat(depth);
const deep = (depth: number): unknown => JSON.parse(nested(depth));

describe('input the system will not store', () => {
  it('answers 400 with the error body to a NUL (or a lone surrogate) in any text field, key, path or query', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Nul' });
    const attempts: [string, string, unknown][] = [
      ['POST', '/v1/messages', { text: 'hi\u0000there' }],
      ['PATCH', '/v1/me', { assistant_name: 'Bo\u0000b' }],
      ['PUT', '/v1/profile/soul', { content: 'calm\u0000' }],
      ['POST', '/v1/gotchas', { description: 'x\u0000' }],
      ['PATCH', '/v1/preferences', { settings: { note: ['deep', { in: 'a\u0000' }] } }],
      ['PATCH', '/v1/preferences', { settings: { 'key\u0000': 1 } }],
      ['PATCH', '/v1/preferences', { settings: { half: 'pair \ud83d' } }],
      ['PATCH', '/v1/preferences', { settings: { 'half \ud83d': 'pair' } }],
      ['GET', '/v1/sessions/agent%00main/messages', undefined],
      ['GET', '/v1/approvals?status=pending%00', undefined],
    ];
    for (const [method, path, body] of attempts) {
      const res = await user.request(method, path, body);
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body.error).toMatchObject({ code: 'validation_failed', message: expect.stringMatching(/NUL|lone surrogate/) });
    }
    const admin = await new Api(system.url, system.adminToken).post('/v1/users', { display_name: 'Eve\u0000' });
    expect(admin.status).toBe(400);
    expect((await user.get('/v1/me')).body.assistant_name).not.toContain('\u0000');
  });

  it('answers 400 to JSON nested deeper than 64 levels on every route, and accepts 64', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Deep' });
    for (const [method, path] of [
      ['POST', '/v1/messages'],
      ['PATCH', '/v1/preferences'],
      ['POST', '/v1/link-codes'],
      ['POST', '/v1/turns/00000000-0000-4000-8000-000000000000/continue'],
      ['POST', '/v1/users'],
    ] as const) {
      // As text: serialising it here would overflow this process's own stack.
      const res = await user.request(method, path, `{"text":"x","settings":${nested(5_000)}}`, { 'content-type': 'application/json' });
      expect({ path, status: res.status }).toEqual({ path, status: 400 });
      expect(res.body.error.message).toMatch(/nested deeper than 64/);
    }
    // A charset other than UTF-8 is refused with the same error body, as a 400.
    const latin = await user.request('PATCH', '/v1/preferences', '{"settings":{}}', {
      'content-type': 'application/json; charset=iso-8859-1',
    });
    expect({ status: latin.status, code: latin.body.error.code }).toEqual({ status: 400, code: 'unsupported_encoding' });
    // The body is level 1 and settings level 2: 62 arrays inside make 64 levels in all.
    const ok = await user.patch('/v1/preferences', { settings: { nested: deep(62) } });
    expect(ok.status).toBe(200);
    expect((await user.patch('/v1/preferences', { settings: { nested: deep(63) } })).status).toBe(400);
  });
});

describe('open event streams', () => {
  /** Opens a turn's stream and keeps it open; `close` ends it from the client side. */
  async function openStream(user: Api, turnId: string) {
    const controller = new AbortController();
    const res = await fetch(`${system.url}/v1/turns/${turnId}/events`, {
      headers: { authorization: `Bearer ${user.apiKey}` },
      signal: controller.signal,
    });
    return { res, close: () => controller.abort() };
  }

  it("end when their user is erased: the turn's events, `done` included, go with the user", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Leaving' });
    const { turn_id } = await user.send('Folder left behind');
    await user.events(turn_id, { until: (event) => event.event === 'tool_approval_request' });
    const { res } = await openStream(user, turn_id);
    expect(res.status).toBe(200);
    expect((await user.request('DELETE', '/v1/me')).status).toBe(202);
    // Resolves once the gateway ends the stream (within a heartbeat).
    const seen = await res.text();
    expect(seen).toContain('event: tool_approval_request');
    expect(seen).not.toContain('event: done');
  });

  it('holds at most 20 per user (429 with Retry-After past it); a closed stream frees its slot', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Streamer' });
    const other = await api.createUser(system.adminToken, { name: 'Other' });
    const { turn_id } = await user.send('Waiting folder');
    const streams = await Promise.all(Array.from({ length: 20 }, () => openStream(user, turn_id)));
    expect(streams.map((s) => s.res.status)).toEqual(Array(20).fill(200));

    const refused = await openStream(user, turn_id);
    expect(refused.res.status).toBe(429);
    expect(Number(refused.res.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    expect(await refused.res.json()).toMatchObject({ error: { code: 'too_many_streams' } });
    // Another user's streams are not counted against this one.
    const theirs = await other.send('Their folder');
    const own = await openStream(other, theirs.turn_id);
    expect(own.res.status).toBe(200);
    own.close();

    streams.pop()?.close();
    const freed = await system.waitFor(async () => {
      const next = await openStream(user, turn_id);
      if (next.res.status === 200) return next;
      await next.res.body?.cancel();
      return undefined;
    }, 'a freed slot');
    freed.close();
    for (const stream of streams) stream.close();
  });

  it('answers HEAD with the headers alone, and it holds no slot', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Peeker' });
    const { turn_id } = await user.send('Peeked folder');
    const heads = await Promise.all(
      Array.from({ length: 21 }, () =>
        fetch(`${system.url}/v1/turns/${turn_id}/events`, { method: 'HEAD', headers: { authorization: `Bearer ${user.apiKey}` } }),
      ),
    );
    expect(heads.map((res) => res.status)).toEqual(Array(21).fill(200));
    expect(heads[0]?.headers.get('content-type')).toBe('text/event-stream; charset=utf-8');
    const streams = await Promise.all(Array.from({ length: 20 }, () => openStream(user, turn_id)));
    expect(streams.map((s) => s.res.status)).toEqual(Array(20).fill(200));
    for (const stream of streams) stream.close();
  });

  it("frees a dead gateway's slots once their lease lapses", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Orphan' });
    const { turn_id } = await user.send('Orphan folder');
    const streams = await Promise.all(Array.from({ length: 20 }, () => openStream(user, turn_id)));
    expect(streams.every((s) => s.res.status === 200)).toBe(true);
    await system.signal('gateway', 'SIGKILL');
    for (const stream of streams) stream.close();
    system.spawn('gateway');
    await system.waitReady();
    const next = await system.waitFor(
      async () => {
        const attempt = await openStream(user, turn_id);
        if (attempt.res.status === 200) return attempt;
        await attempt.res.body?.cancel();
        return undefined;
      },
      'the lapsed slots',
      { timeoutMs: 40_000 },
    );
    next.close();
  }, 60_000);
});

describe('limits on what a user creates', () => {
  it('rate-limits link codes and gotchas with 429 and Retry-After', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Limited' });
    for (const [path, body, allowed] of [
      ['/v1/link-codes', {}, 10],
      ['/v1/gotchas', { description: 'A pitfall' }, 30],
    ] as const) {
      for (let i = 0; i < allowed; i++) expect((await user.post(path, body)).status).toBe(201);
      const refused = await user.post(path, body);
      expect(refused.status).toBe(429);
      expect(refused.body.error.code).toBe('rate_limited');
      expect(Number(refused.headers.get('retry-after'))).toBeGreaterThanOrEqual(1);
    }
  });

  it('accepts only default models within MODEL_ALLOWLIST; a refused PATCH changes nothing', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Chooser' });
    expect((await user.patch('/v1/preferences', { default_model: 'gpt-4o' })).body.default_model).toBe('gpt-4o');
    const refused = await user.patch('/v1/preferences', { default_model: 'o1-pro', max_iterations: 3 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual([expect.objectContaining({ path: ['default_model'] })]);
    expect((await user.get('/v1/preferences')).body).toMatchObject({ default_model: 'gpt-4o', max_iterations: 15 });
    expect((await user.patch('/v1/preferences', { default_model: null })).body.default_model).toBeNull();
  });

  it('calls the default model, for turns and digests, for a user whose model was chosen before MODEL_ALLOWLIST left it out', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Early chooser', preferences: { autonomous_mode: true } });
    const db = testDb();
    try {
      await db.query(`UPDATE user_preferences SET default_model = 'o1-pro' WHERE user_id = $1`, [user.userId]);
    } finally {
      await db.end();
    }
    const before = model.requests.length;
    const { events } = await user.converse('Allowlisted');
    expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    expect((await user.post('/v1/sessions/agent:main:main/reset')).status).toBe(202);
    await waitFor(() => model.requests.slice(before).some((request) => isDigest(request.body)), 'the reset session digested');
    const models = model.requests.slice(before).map((request) => request.body.model);
    expect(models.length).toBeGreaterThan(1);
    expect(models.every((name) => name === 'gpt-4o-mini')).toBe(true);
  });

  /** A gateway of its own started with `env`, and what it printed until `warning` (or until it exited). */
  async function gatewayWarning(env: Record<string, string>, name: string, warning: string) {
    const child = system.spawn('gateway', { ...env, PORT: '0' }, name);
    let output = '';
    const warned = new Promise<void>((resolve) =>
      child.stdout?.on('data', (chunk: Buffer) => {
        output += chunk.toString('utf8');
        if (output.includes(warning)) resolve();
      }),
    );
    await Promise.race([warned, new Promise((resolve) => child.once('exit', resolve))]);
    return { child, output };
  }

  it('starts with a short ADMIN_TOKEN, warning that it can be guessed without showing it', async () => {
    const { child, output } = await gatewayWarning(
      { ADMIN_TOKEN: 'short-admin' },
      'short-token',
      'ADMIN_TOKEN is shorter than 16 characters',
    );
    expect(child.exitCode).toBeNull();
    expect(output).toContain('ADMIN_TOKEN is shorter than 16 characters');
    expect(output).not.toContain('short-admin');
    expect(await system.signal('short-token', 'SIGTERM')).toBe(0);
  });

  it('starts with a channel half set up, saying which settings keep it off without showing any', async () => {
    const { child, output } = await gatewayWarning({ TELEGRAM_BOT_TOKEN: '42:half-set-up-token' }, 'half-channel', 'telegram is off');
    expect(child.exitCode).toBeNull();
    expect(output).toContain('telegram is off: TELEGRAM_WEBHOOK_SECRET not set');
    expect(output).not.toContain('half-set-up-token');
    expect(await system.signal('half-channel', 'SIGTERM')).toBe(0);
  });
});

describe('approvals', () => {
  it('lists each approval with approval_id, the name its events use, and id', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Approver' });
    const { turn_id } = await user.send('Approved folder');
    const events = await user.events(turn_id, { until: (event) => event.event === 'tool_approval_request' });
    const approvalId = events.at(-1)?.data.approval_id;
    const listed = await user.get('/v1/approvals?status=pending');
    expect(listed.body).toEqual([expect.objectContaining({ approval_id: approvalId, id: approvalId })]);
  });
});

describe('answers', () => {
  /** The issues of an answer against the schema /openapi.json is built from, fields it does not name included. */
  const issuesOf = (schema: z.ZodObject, body: unknown) => z.array(schema.strict()).safeParse(body).error?.issues;

  it('have the shapes /openapi.json gives them: approvals, sessions and their messages', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Described' });
    const { turn_id } = await user.send('Described folder');
    const events = await user.events(turn_id, { until: (event) => event.event === 'tool_approval_request' });
    expect(issuesOf(approvalResponse, (await user.get('/v1/approvals')).body)).toBeUndefined();
    await user.post(`/v1/approvals/${String(events.at(-1)?.data.approval_id)}`, { decision: 'approve' });
    await user.events(turn_id);
    expect(issuesOf(sessionResponse, (await user.get('/v1/sessions')).body)).toBeUndefined();
    const messages = await user.get('/v1/sessions/agent:main:main/messages');
    expect(messages.body).toHaveLength(2);
    expect(issuesOf(sessionMessageResponse, messages.body)).toBeUndefined();
  });
});

describe('a new user', () => {
  it('has an empty main session before the first message (its reset is a no-op), and no other', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Newcomer' });
    const main = await user.get('/v1/sessions/agent:main:main/messages');
    expect(main.status).toBe(200);
    expect(main.body).toEqual([]);
    expect((await user.get('/v1/sessions/agent:main:api:direct:nobody/messages')).status).toBe(404);
    expect((await user.post('/v1/sessions/agent:main:main/reset')).status).toBe(202);
    expect((await user.post('/v1/sessions/agent:main:api:direct:nobody/reset')).status).toBe(404);
  });
});
