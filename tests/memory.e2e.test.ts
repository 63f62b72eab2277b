import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { codePointLength, DEFAULT_PROFILE, MAX_PROFILE_SECTION_CHARS, nameKey } from '@assistant/shared';
import { Api, UUID } from '../scripts/lib/api';
import { testDb } from './helpers/db';
import { afterTools, FakeModel, userText, type ChatRequestBody, type FakeReply } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * Issue 6 end to end (docs/memory.md): what the model is shown, read from the requests the fake
 * model server received (its system messages: the system prompt first, then the history's summary
 * and the turn's context, docs/memory.md#request-layout), and what the memory keeps.
 */
const IDLE_SECONDS = 2;
const HISTORY_BUDGET = 1_500;
const DIGEST_SUMMARY = 'Fake digest: the user is planting tomatoes and basil on Saturday.';

const model = new FakeModel();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;

/** Per test: the answer to a turn's user message, then the answer after tool results. */
let plan: (text: string) => FakeReply = () => ({ content: 'ok' });
let answer: () => FakeReply = () => ({ content: 'done' });
/** Until then, the model answers digest requests 503, as a provider down for a while does. */
let digestsFailUntil = 0;

const isDigest = (body: ChatRequestBody) => String(body.messages[0]?.content).startsWith('You write session digests');

beforeAll(async () => {
  await model.start();
  model.script = (body) => {
    if (isDigest(body)) return Date.now() < digestsFailUntil ? { status: 503, content: 'overloaded' } : { content: DIGEST_SUMMARY };
    return afterTools(body) ? answer() : plan(userText(body));
  };
  db = testDb();
  await system.start({
    env: { OPENAI_BASE_URL: model.url, SESSION_IDLE_SECONDS: String(IDLE_SECONDS), HISTORY_TOKEN_BUDGET: String(HISTORY_BUDGET) },
  });
  api = new Api(system.url);
});

afterAll(async () => {
  await system.stop();
  await model.stop();
  await db.end();
});

/** The user's MEMORY once it holds a digest of the session `key`. */
async function digestedMemory(user: Api, key: string, timeoutMs: number): Promise<string> {
  return waitFor(
    async () => {
      const { memory } = (await user.get('/v1/profile')).body as { memory: string };
      return memory.includes(`(${key})`) ? memory : undefined;
    },
    `a digest of ${key} in MEMORY`,
    { timeoutMs },
  );
}

/** What the system told the model in the (first) request of the turn started by `text`: all its system messages. */
function systemPromptFor(text: string): string {
  const request = model.requests.find((r) => !isDigest(r.body) && userText(r.body) === text);
  if (!request) throw new Error(`the model never saw "${text}"`);
  return systemText(request.body);
}

function systemText(body: ChatRequestBody): string {
  return body.messages
    .filter((m) => m.role === 'system')
    .map((m) => String(m.content))
    .join('\n\n');
}

function headings(prompt: string): string[] {
  return [...prompt.matchAll(/^## (.+)$/gm)].map((match) => match[1] as string);
}

/** The body of one `## heading` section of a prompt. */
function section(prompt: string, heading: string): string {
  const start = prompt.indexOf(`## ${heading}\n`);
  if (start < 0) return '';
  const next = prompt.indexOf('\n\n## ', start + 3);
  return prompt.slice(start + heading.length + 4, next < 0 ? undefined : next);
}

interface UsageBody {
  days: { turns: number; model_calls: number; prompt_tokens: number; completion_tokens: number }[];
  budget: { used_today: number };
}

async function say(user: Api, text: string, sessionKey?: string): Promise<void> {
  const { events } = await user.converse(text, sessionKey);
  expect(events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
}

describe('injection rules (docs/memory.md#profile)', () => {
  it('shows Personality, User Profile and Long-term Memory in the main session, neither USER nor MEMORY in a group', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Ana' });
    expect((await user.request('PUT', '/v1/profile/user', { content: 'Ana lives in Lisbon and has two cats.' })).status).toBe(200);
    expect((await user.request('PUT', '/v1/profile/memory', { content: 'Ana prefers green tea.' })).status).toBe(200);

    await say(user, 'hello from the main session');
    const main = systemPromptFor('hello from the main session');
    expect(headings(main)).toEqual(expect.arrayContaining(['Personality', 'User Profile', 'Long-term Memory']));
    expect(section(main, 'Personality')).toBe(DEFAULT_PROFILE.soul);
    expect(section(main, 'User Profile')).toBe('Ana lives in Lisbon and has two cats.');
    expect(section(main, 'Long-term Memory')).toBe('Ana prefers green tea.');
    expect(section(main, 'Tools')).toContain('- rename_document:');

    await say(user, 'hello from the team group', 'agent:main:api:group:team');
    const group = systemPromptFor('hello from the team group');
    expect(headings(group)).toContain('Personality');
    expect(headings(group)).not.toContain('User Profile');
    expect(headings(group)).not.toContain('Long-term Memory');
    expect(group).not.toContain('Lisbon');
    expect(group).not.toContain('green tea');
  });
});

describe('session digest', () => {
  it('digests an idle session into MEMORY under a dated heading, and the next message shows it', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Bia' });
    await say(user, 'I am planting tomatoes');
    await say(user, 'and basil too');
    await say(user, 'on Saturday morning');
    const silence = Date.now();

    const memory = await waitFor(
      async () => {
        const profile = (await user.get('/v1/profile')).body as { memory: string };
        return profile.memory.includes(DIGEST_SUMMARY) && profile.memory;
      },
      'the digest in MEMORY',
      { timeoutMs: 10_000 },
    );
    expect(Date.now() - silence).toBeLessThan(10_000);
    expect(memory).toMatch(
      new RegExp(`### Session digest \\d{4}-\\d{2}-\\d{2} \\d{2}:\\d{2} UTC \\(agent:main:main\\)\\n${DIGEST_SUMMARY}`),
    );
    // Usually one digest covers all three; a slow machine may have digested between two of them.
    const transcripts = model.requests
      .filter((r) => isDigest(r.body) && r.body.messages[1]?.content?.startsWith('Transcript of session agent:main:main'))
      .map((r) => String(r.body.messages[1]?.content))
      .join('\n');
    for (const text of ['I am planting tomatoes', 'and basil too', 'on Saturday morning']) expect(transcripts).toContain(`User: ${text}`);

    await say(user, 'what do you remember about my garden?');
    expect(section(systemPromptFor('what do you remember about my garden?'), 'Long-term Memory')).toContain(DIGEST_SUMMARY);
  });

  it('digests at once on reset, then starts a fresh session under the same key', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Caio' });
    const key = 'agent:main:api:direct:reset-test';
    await say(user, 'my sister Rita visits in June', key);
    // A double click: both answer 202, and the session is digested once.
    const resets = await Promise.all([user.post(`/v1/sessions/${key}/reset`), user.post(`/v1/sessions/${key}/reset`)]);
    expect(resets.map((reset) => reset.status)).toEqual([202, 202]);
    const memory = await digestedMemory(user, key, 10_000);
    expect(memory).toContain(DIGEST_SUMMARY);
    expect(memory.split(DIGEST_SUMMARY)).toHaveLength(2);
    const fresh = await user.get(`/v1/sessions/${key}/messages`);
    expect(fresh.status).toBe(200);
    expect(fresh.body).toEqual([]);
    expect((await user.get('/v1/sessions')).body.map((session: { session_key: string }) => session.session_key)).toContain(key);
    expect((await user.post('/v1/sessions/agent:main:api:direct:never-used/reset')).status).toBe(404);
  });

  it("counts a reset's digest in GET /v1/usage and the budget: one more model call of the day, not a turn", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Gil' });
    const key = 'agent:main:api:direct:usage-test';
    await say(user, 'the car goes to the garage on Monday', key);
    expect((await user.post(`/v1/sessions/${key}/reset`)).status).toBe(202);
    await digestedMemory(user, key, 10_000);
    const { days, budget } = (await user.get('/v1/usage?days=1')).body as UsageBody;
    // The turn's one call and the digest's.
    expect(days[0]).toMatchObject({ turns: 1, model_calls: 2 });
    expect(budget.used_today).toBe((days[0]?.prompt_tokens ?? 0) + (days[0]?.completion_tokens ?? 0));
  });

  it("shows the model no UUID a client put in a session's key (a web app's conversation id)", async () => {
    const user = await api.createUser(system.adminToken, { name: 'Edu' });
    const key = `agent:main:web:direct:${randomUUID()}`;
    await say(user, 'the piano tuner comes on Tuesday', key);
    expect((await user.post(`/v1/sessions/${key}/reset`)).status).toBe(202);
    await digestedMemory(user, key, 10_000);
    const seen = model.requests.filter((r) => r.raw.includes('piano tuner'));
    expect(seen.some((r) => isDigest(r.body))).toBe(true);
    for (const request of seen) expect(request.raw).not.toMatch(UUID);
  });

  it('digests a reset session once the model is back, after an outage longer than a few retries', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Dora' });
    const key = 'agent:main:api:direct:outage';
    await say(user, 'the boiler service is booked for Friday', key);
    // Longer than the retries of any other job (5 attempts, 7.5 s of backoff in all), so longer
    // than the session's idle digest, armed by its message, would retry too.
    digestsFailUntil = Date.now() + 12_000;
    expect((await user.post(`/v1/sessions/${key}/reset`)).status).toBe(202);
    const memory = await digestedMemory(user, key, 40_000);
    expect(memory.split(`(${key})`)).toHaveLength(2);
    const failed = model.requests.filter((r) => isDigest(r.body) && r.body.messages.some((m) => String(m.content).includes('boiler')));
    expect(failed.length).toBeGreaterThan(5);
  }, 60_000);

  it('keeps MEMORY within what PUT accepts: a digest appended at the limit drops the oldest paragraphs, and the result PUTs back', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Flor' });
    const key = 'agent:main:api:direct:full-memory';
    // At the limit as the PUT and PostgreSQL count it (each 🌱 one character), in paragraphs.
    const notes = Array.from({ length: 1_000 }, (_, n) => `Note ${n}: 🌱 ${'x'.repeat(80)}`).join('\n\n');
    const oldest = `The oldest note.\n\n${notes}`;
    const full = oldest + '.'.repeat(MAX_PROFILE_SECTION_CHARS - codePointLength(oldest));
    expect((await user.request('PUT', '/v1/profile/memory', { content: full })).status).toBe(200);
    await say(user, 'the orchard needs pruning in March', key);
    expect((await user.post(`/v1/sessions/${key}/reset`)).status).toBe(202);
    const memory = await digestedMemory(user, key, 10_000);
    expect(codePointLength(memory)).toBeLessThanOrEqual(MAX_PROFILE_SECTION_CHARS);
    expect(memory.endsWith(`(${key})\n${DIGEST_SUMMARY}`)).toBe(true);
    expect(memory).toMatch(/^Note \d+: 🌱 x+\n\n/);
    expect(memory).not.toContain('The oldest note.');
    expect((await user.request('PUT', '/v1/profile/memory', { content: memory })).status).toBe(200);
  });

  it('makes no digest for a disabled user, and makes it once they are enabled again', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Edu' });
    const admin = api.as(system.adminToken);
    await say(user, 'the harpsichord tuner comes on Tuesday');
    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { disabled: true })).status).toBe(200);
    const aboutHarpsichord = () =>
      model.requests.filter((r) => isDigest(r.body) && r.body.messages.some((m) => String(m.content).includes('harpsichord')));
    // Several idle periods: the session's idle digest is due long before the end.
    await new Promise((resolve) => setTimeout(resolve, 4 * IDLE_SECONDS * 1_000));
    expect(aboutHarpsichord()).toHaveLength(0);

    expect((await admin.patch(`/v1/admin/users/${user.userId}`, { disabled: false })).status).toBe(200);
    await digestedMemory(user, 'agent:main:main', 20_000);
    expect(aboutHarpsichord().length).toBeGreaterThan(0);
  }, 60_000);
});

describe('gotchas', () => {
  it('turns three identical rename_document failures into one gotcha listed under Known pitfalls', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Duda', preferences: { autonomous_mode: true } });
    plan = (text) =>
      text.startsWith('rename my plan')
        ? { toolCalls: [{ name: 'rename_document', arguments: { document_id: 'Plan', new_title: 'T'.repeat(300) } }] }
        : { content: 'ok' };
    answer = () => ({ content: 'That title is too long.' });
    for (const n of [1, 2, 3]) {
      const { events } = await user.converse(`rename my plan, attempt ${n}`);
      const failed = events.find((event) => event.event === 'task_update' && event.data.status === 'failed');
      expect(String(failed?.data.error)).toMatch(/new_title/);
    }

    const gotchas = (await user.get('/v1/gotchas')).body as Record<string, unknown>[];
    expect(gotchas).toHaveLength(1);
    expect(gotchas[0]).toMatchObject({ tool_name: 'rename_document', source: 'auto_detected', occurrences: 3 });
    expect(gotchas[0]?.pattern).toMatch(/new_title/);
    expect(gotchas[0]?.first_seen).toBeTruthy();
    expect(gotchas[0]?.last_seen).toBeTruthy();

    plan = () => ({ content: 'ok' });
    await say(user, 'anything new?');
    const pitfalls = section(systemPromptFor('anything new?'), 'Known pitfalls');
    expect(pitfalls).toMatch(/^- rename_document failed 3 times this way: .*new_title/);
  });

  it('adds gotchas by hand, validated, and shows them too', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Eva' });
    const added = await user.post('/v1/gotchas', {
      tool_name: 'delete_folder',
      description: 'Ask before deleting a folder with documents.',
    });
    expect(added.status).toBe(201);
    expect(added.body).toMatchObject({
      tool_name: 'delete_folder',
      source: 'manual',
      description: 'Ask before deleting a folder with documents.',
    });
    expect((await user.post('/v1/gotchas', { description: 'Answer in Portuguese.' })).status).toBe(201);
    expect((await user.post('/v1/gotchas', { tool_name: 'fly_to_moon', description: 'x' })).status).toBe(400);
    expect((await user.post('/v1/gotchas', { description: '  ' })).status).toBe(400);
    expect((await user.get('/v1/gotchas')).body).toHaveLength(2);

    await say(user, 'hi there');
    const pitfalls = section(systemPromptFor('hi there'), 'Known pitfalls');
    expect(pitfalls).toContain('- delete_folder: Ask before deleting a folder with documents.');
    expect(pitfalls).toContain('- Answer in Portuguese.');
  });
});

describe('gotchas of mistakes the agent worker catches', () => {
  it('counts arguments that are not JSON as the tool worker counts refused ones, and shows the gotcha in the turn context while the tool is in play', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Gil', preferences: { autonomous_mode: true } });
    plan = (text) =>
      text.startsWith('rename the report')
        ? { toolCalls: [{ name: 'rename_document', arguments: `{"document_id": "${text.slice(27)} report", "new_title": ` }] }
        : { content: 'ok' };
    answer = () => ({ content: 'Sorry, that did not work.' });
    for (const attempt of ['one', 'two', 'three']) {
      const { events } = await user.converse(`rename the report, attempt ${attempt}`);
      const failed = events.find((event) => event.event === 'task_update' && event.data.status === 'failed');
      expect(String(failed?.data.error)).toMatch(/^The arguments were not valid JSON/);
    }

    const gotchas = (await user.get('/v1/gotchas')).body as Record<string, unknown>[];
    expect(gotchas).toEqual([
      expect.objectContaining({
        tool_name: 'rename_document',
        source: 'auto_detected',
        pattern: 'The arguments were not valid JSON.',
        occurrences: 3,
      }),
    ]);
    // What the model sent is not kept: a pitfall is shown in every session, groups too, and the text may be anything of the user's.
    expect(JSON.stringify(gotchas)).not.toContain('report');
    const seen = gotchas[0] as { first_seen: string; last_seen: string };
    expect(Date.parse(seen.first_seen)).toBeLessThanOrEqual(Date.parse(seen.last_seen));

    // A gotcha about a tool the model is not offered (an MCP server no longer configured) is not in play.
    await db.query(
      `INSERT INTO gotchas (user_id, tool_name, pattern, description, source, occurrences, cause)
       VALUES ($1, 'gone__list_notes', 'x', 'The MCP server "gone" is not available.', 'auto_detected', 3, 'unavailable')`,
      [user.userId],
    );
    expect((await user.post('/v1/gotchas', { tool_name: 'rename_document', description: 'Titles in Portuguese.' })).status).toBe(201);
    plan = () => ({ content: 'ok' });
    await say(user, 'what can you do?');
    const request = model.requests.find((r) => !isDigest(r.body) && userText(r.body) === 'what can you do?');
    const [first, ...rest] = request?.body.messages ?? [];
    // In the turn's context (a later system message), not in the system prompt that stays the same from turn to turn.
    expect(String(first?.content)).not.toContain('Known pitfalls');
    const pitfalls = section(systemText({ ...request?.body, messages: rest } as ChatRequestBody), 'Known pitfalls').split('\n');
    expect(pitfalls).toEqual([
      '- rename_document: Titles in Portuguese.',
      '- rename_document failed 3 times this way: The arguments were not valid JSON. Check the arguments before calling it again.',
    ]);
  });
});

describe('history budget', () => {
  it('keeps a 200-message session under HISTORY_TOKEN_BUDGET and still summarises its oldest part', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Fia' });
    const key = 'agent:main:api:direct:long';
    const session = await db.query<{ id: string }>('INSERT INTO sessions (user_id, session_key) VALUES ($1, $2) RETURNING id', [
      user.userId,
      key,
    ]);
    const sessionId = session.rows[0]?.id;
    await db.query(
      `INSERT INTO messages (session_id, role, content)
       SELECT $1, CASE WHEN i % 2 = 1 THEN 'user' ELSE 'assistant' END,
              CASE WHEN i = 1 THEN 'Before anything else: the zebra project starts in May.'
                   ELSE 'Message ' || i || ': ' || repeat('about the garden and the kitchen plans ', 5) END
       FROM generate_series(1, 200) AS i ORDER BY i`,
      [sessionId],
    );
    await say(user, 'so, where were we?', key);

    const request = model.requests.find((r) => !isDigest(r.body) && userText(r.body) === 'so, where were we?');
    const conversation = request?.body.messages.filter((m) => m.role !== 'system') ?? [];
    const summary = section(request ? systemText(request.body) : '', 'Earlier in this conversation');
    expect(summary).toContain('the zebra project starts in May');
    expect(conversation.length).toBeLessThan(200);
    const tokens = conversation.reduce((sum, m) => sum + Math.ceil(String(m.content ?? '').length / 4) + 4, 0);
    expect(tokens + Math.ceil(summary.length / 4)).toBeLessThanOrEqual(HISTORY_BUDGET);
    expect(conversation.at(-1)).toMatchObject({ role: 'user', content: 'so, where were we?' });
  });
});

describe('profile API', () => {
  it('reads, replaces one section, resets to the defaults, and refuses unknown sections', async () => {
    const user = await api.createUser(system.adminToken, { name: 'Gil' });
    const initial = await user.get('/v1/profile');
    expect(initial.status).toBe(200);
    expect(initial.body).toEqual(DEFAULT_PROFILE);
    expect(Object.keys(initial.body).sort()).toEqual(['agents', 'identity', 'memory', 'soul', 'tools', 'user']);

    const put = await user.request('PUT', '/v1/profile/soul', { content: 'Gamer vibe: gg, achievement unlocked.' });
    expect(put.status).toBe(200);
    expect(put.body.soul).toBe('Gamer vibe: gg, achievement unlocked.');
    await user.request('PUT', '/v1/profile/memory', { content: 'Finished Zelda.' });
    expect((await user.get('/v1/profile')).body).toMatchObject({
      soul: 'Gamer vibe: gg, achievement unlocked.',
      memory: 'Finished Zelda.',
    });

    const unknown = await user.request('PUT', '/v1/profile/diary', { content: 'x' });
    expect(unknown.status).toBe(400);
    expect(unknown.body.error.code).toBe('validation_failed');
    expect((await user.request('PUT', '/v1/profile/soul', { content: 'x'.repeat(100_001) })).status).toBe(400);
    expect((await user.request('PUT', '/v1/profile/soul', { text: 'x' })).status).toBe(400);

    const reset = await user.post('/v1/profile/reset');
    expect(reset.status).toBe(200);
    expect(reset.body).toEqual(DEFAULT_PROFILE);
    expect((await user.get('/v1/profile')).body).toEqual(DEFAULT_PROFILE);
  });
});

describe('retrieval', () => {
  it('puts the matching document, with its ref, under Relevant documents; not when RAG is off, not for another user', async () => {
    const owner = await api.createUser(system.adminToken, { name: 'Hana' });
    const stranger = await api.createUser(system.adminToken, { name: 'Ivo' });
    const documentId = randomUUID();
    await db.query('INSERT INTO documents (id, user_id, title, title_key, content) VALUES ($1, $2, $3, $4, $5)', [
      documentId,
      owner.userId,
      'Receita de bolo de cenoura',
      nameKey('Receita de bolo de cenoura'),
      'Três cenouras, três ovos, óleo, açúcar e farinha. Forno a 180 graus por 40 minutos.',
    ]);

    await say(owner, 'Você lembra dos bolos de cenoura?');
    const documents = section(systemPromptFor('Você lembra dos bolos de cenoura?'), 'Relevant documents');
    expect(documents).toMatch(/^- "Receita de bolo de cenoura" \[ID: document_1\]: .*cenouras/);
    const ref = await db.query(
      `SELECT r.entity_id FROM session_refs r JOIN sessions s ON s.id = r.session_id
       WHERE s.user_id = $1 AND s.archived_at IS NULL AND r.entity = 'document' AND r.n = 1`,
      [owner.userId],
    );
    expect(ref.rows).toEqual([{ entity_id: documentId }]);

    await say(stranger, 'Quero a receita dos bolos de cenoura');
    expect(systemPromptFor('Quero a receita dos bolos de cenoura')).not.toContain('## Relevant documents');

    expect((await owner.patch('/v1/preferences', { use_rag_by_default: false })).status).toBe(200);
    await say(owner, 'E os bolos de cenoura, de novo?');
    const off = systemPromptFor('E os bolos de cenoura, de novo?');
    expect(off).not.toContain('## Relevant documents');
    expect(off).not.toContain('Receita de bolo de cenoura');
  });
});

describe('the model boundary', () => {
  it('never showed the model a UUID, in any turn or digest of the tests above', () => {
    expect(model.requests.filter((r) => isDigest(r.body)).length).toBeGreaterThan(0);
    expect(model.requests.length).toBeGreaterThan(10);
    for (const request of model.requests) expect(request.raw).not.toMatch(UUID);
  });
});
