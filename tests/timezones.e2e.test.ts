import { once } from 'node:events';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { DateTime } from 'luxon';
import type pg from 'pg';
import { nameKey, reminderFireJobId } from '@assistant/shared';
import { Api } from '../scripts/lib/api';
import { testDb } from './helpers/db';
import { afterTools, byUserText, FakeModel, type ChatRequestBody } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * The user's clock end to end (issue 19): the time zone preference and DEFAULT_TIMEZONE, reminders
 * in local time, and a model request laid out so a provider can cache its prefix (docs/memory.md#request-layout).
 */
const DEFAULT_ZONE = 'Asia/Tokyo';
/** UTC+14 all year: a zone read as UTC would be 14 hours off. */
const FAR_ZONE = 'Pacific/Kiritimati';

const model = new FakeModel();
const system = new TestSystem();
let db: pg.Pool;
let api: Api;
let redis: Redis;
let reminders: Queue;

/** Where the fake model sets reminders: the local wall-clock times, without an offset. */
const targets = new Map<string, string>();

function localIn(zone: string, plus: { seconds?: number; days?: number }, time?: { hour: number; minute: number }): string {
  const local = DateTime.now().setZone(zone).plus(plus);
  return (time ? local.set({ ...time, second: 0, millisecond: 0 }) : local).toFormat("yyyy-MM-dd'T'HH:mm:ss");
}

beforeAll(async () => {
  await model.start();
  model.script = byUserText({
    'cache: folder': (body) =>
      afterTools(body) ? { content: 'Folder made.' } : { toolCalls: [{ name: 'create_folder', arguments: { name: 'Recipes' } }] },
    'cache: ': () => ({ content: 'Noted.' }),
    'remind me soon': (body) => {
      if (afterTools(body)) return { content: 'Set.' };
      const at = localIn(FAR_ZONE, { seconds: 3 });
      targets.set('Kiritimati stretch', at);
      return { toolCalls: [{ name: 'create_reminder', arguments: { text: 'Kiritimati stretch', at } }] };
    },
    'remind me tomorrow at 9': (body) => {
      if (afterTools(body)) return { content: 'Set.' };
      const at = localIn('America/Sao_Paulo', { days: 1 }, { hour: 9, minute: 0 });
      targets.set('Morning walk', at);
      return { toolCalls: [{ name: 'create_reminder', arguments: { text: 'Morning walk', at, repeat: 'daily' } }] };
    },
  });
  db = testDb();
  await system.start({ env: { OPENAI_BASE_URL: model.url, DEFAULT_TIMEZONE: DEFAULT_ZONE } });
  api = new Api(system.url);
  redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379', { maxRetriesPerRequest: null });
  reminders = new Queue('reminders', { connection: redis, prefix: system.prefix });
});

afterAll(async () => {
  await system.stop();
  await model.stop();
  await reminders.close();
  await redis.quit();
  await db.end();
});

async function userIn(zone: string): Promise<Api & { userId: string }> {
  const user = await api.createUser(system.adminToken);
  const patched = await user.patch('/v1/preferences', { autonomous_mode: true, timezone: zone });
  expect(patched.status).toBe(200);
  expect(patched.body.timezone).toBe(zone);
  return user;
}

describe('the timezone preference', () => {
  it('starts at DEFAULT_TIMEZONE, takes an IANA name, and refuses an unknown zone changing nothing', async () => {
    const user = await api.createUser(system.adminToken);
    expect((await user.get('/v1/preferences')).body.timezone).toBe(DEFAULT_ZONE);
    const refused = await user.patch('/v1/preferences', { timezone: 'Mars/Olympus_Mons', max_iterations: 7 });
    expect(refused.status).toBe(400);
    expect(refused.body.error.details).toEqual(expect.arrayContaining([expect.objectContaining({ path: ['timezone'] })]));
    expect((await user.get('/v1/preferences')).body).toMatchObject({ timezone: DEFAULT_ZONE, max_iterations: 15 });
    expect((await user.patch('/v1/preferences', { timezone: '+03:00' })).status).toBe(400);
    expect((await user.patch('/v1/preferences', { timezone: 'America/Sao_Paulo' })).body.timezone).toBe('America/Sao_Paulo');
  });

  it('keeps a process with an unknown DEFAULT_TIMEZONE from starting, naming it', async () => {
    const child = system.spawn('gateway', { DEFAULT_TIMEZONE: 'Mars/Olympus_Mons', PORT: '0' }, 'bad-zone-gateway');
    const [code] = (await once(child, 'exit')) as [number | null];
    expect(code).toBe(1);
    const output = system.logs.filter((line) => line.startsWith('[bad-zone-gateway]')).join('');
    expect(output).toContain('DEFAULT_TIMEZONE: unknown IANA time zone "Mars/Olympus_Mons"');
    expect(output).not.toMatch(/\n\s+at /);
  });
});

describe('reminders in local time', () => {
  it(`fires a reminder set in ${FAR_ZONE} local time, without an offset, at that local time`, async () => {
    const user = await userIn(FAR_ZONE);
    const { events } = await user.converse('remind me soon');
    const created = JSON.parse(String(events.find((event) => event.event === 'tool_complete')?.data.result)) as Record<string, unknown>;
    const local = targets.get('Kiritimati stretch') as string;
    expect(created).toMatchObject({ success: true, at_local: `${local.slice(0, 10)} ${local.slice(11, 16)} (${FAR_ZONE})` });
    const target = DateTime.fromISO(local, { zone: FAR_ZONE }).toMillis();

    let firedAt = 0;
    await waitFor(
      async () => {
        const found = await db.query<{ last_fired_at: Date | null }>('SELECT last_fired_at FROM reminders WHERE user_id = $1', [
          user.userId,
        ]);
        firedAt = found.rows[0]?.last_fired_at?.getTime() ?? 0;
        return firedAt > 0;
      },
      'the reminder to fire',
      { timeoutMs: target + 5_000 - Date.now() },
    );
    expect(firedAt).toBeGreaterThanOrEqual(target);
    const messages = (await user.get('/v1/sessions/agent:main:main/messages')).body as { role: string; content: string }[];
    expect(messages.at(-1)).toMatchObject({ role: 'assistant', content: 'Kiritimati stretch' });
  });

  it("keeps a reminder's wall-clock time when the user moves to another zone, and reschedules its job", async () => {
    const user = await userIn('America/Sao_Paulo');
    await user.converse('remind me tomorrow at 9');
    const local = targets.get('Morning walk') as string;
    const before = await db.query<{ id: string; at: Date }>('SELECT id, at FROM reminders WHERE user_id = $1', [user.userId]);
    const { id, at } = before.rows[0] as { id: string; at: Date };
    expect(at.getTime()).toBe(DateTime.fromISO(local, { zone: 'America/Sao_Paulo' }).toMillis());

    expect((await user.patch('/v1/preferences', { timezone: 'Europe/Lisbon' })).status).toBe(200);
    const moved = DateTime.fromISO(local, { zone: 'Europe/Lisbon' });
    const after = await db.query<{ at: Date }>('SELECT at FROM reminders WHERE id = $1', [id]);
    expect(after.rows[0]?.at.getTime()).toBe(moved.toMillis());
    expect(await reminders.getJobState(reminderFireJobId(id, moved.toJSDate()))).toBe('delayed');
    await waitFor(async () => (await reminders.getJobState(reminderFireJobId(id, at))) === 'unknown', 'the stale job to go', {
      timeoutMs: 5_000,
    });
  });
});

describe('a request a provider can cache (docs/memory.md#request-layout)', () => {
  it('sends the same system message in every turn, repeats earlier requests as a prefix, and puts the clock and documents last', async () => {
    const user = await userIn(FAR_ZONE);
    await db.query('INSERT INTO documents (id, user_id, title, title_key, content) VALUES (gen_random_uuid(), $1, $2, $3, $4)', [
      user.userId,
      'Receita de bolo de cenoura',
      nameKey('Receita de bolo de cenoura'),
      'Três cenouras, três ovos, óleo, açúcar e farinha.',
    ]);
    const first = model.requests.length;
    for (const text of ['cache: folder please', 'cache: thanks', 'cache: e o bolo de cenoura?']) {
      expect((await user.converse(text)).events.at(-1)?.data).toMatchObject({ type: 'done', status: 'completed' });
    }
    const requests = model.requests.slice(first);
    // The first turn calls a tool, so its history holds a tool call and its result: four requests.
    expect(requests).toHaveLength(4);
    const bodies = requests.map((request) => request.body);

    const systemMessages = bodies.map((body) => body.messages[0]);
    for (const message of systemMessages) expect(message).toEqual(systemMessages[0]);
    expect(systemMessages[0]?.role).toBe('system');
    const prompt = String(systemMessages[0]?.content);
    expect(prompt).not.toMatch(/\d{4}-\d{2}-\d{2}|\d{2}:\d{2}|Current time|Relevant documents|cenoura/);
    for (const body of bodies) expect(JSON.stringify(body.tools)).toBe(JSON.stringify(bodies[0]?.tools));

    // Each request repeats the one before it, byte for byte, up to that one's turn context.
    for (let i = 1; i < requests.length; i++) {
      const previous = requests[i - 1]?.raw as string;
      const cut = previous.indexOf('{"role":"system","content":"## Current time');
      expect(cut).toBeGreaterThan(0);
      expect((requests[i]?.raw as string).slice(0, cut)).toBe(previous.slice(0, cut));
    }

    const third = bodies[3] as ChatRequestBody;
    const context = contextOf(third);
    expect(third.messages.at(-1)).toEqual({ role: 'user', content: 'cache: e o bolo de cenoura?' });
    const startedAt = requests[3]?.startedAt as number;
    const clocks = [startedAt, startedAt - 60_000].map((ms) =>
      DateTime.fromMillis(ms, { zone: FAR_ZONE }).toFormat('cccc, yyyy-MM-dd HH:mm'),
    );
    expect(clocks.some((clock) => context.includes(`${clock} (${FAR_ZONE}`))).toBe(true);
    expect(context).toMatch(/## Relevant documents\n- "Receita de bolo de cenoura" \[ID: document_\d+\]/);
    // The clock and documents of earlier turns were never stored: each request has one context.
    expect(third.messages.filter((m) => String(m.content).includes('## Current time'))).toHaveLength(1);
  });
});

/** The turn's context: the system message right before the newest user message. */
function contextOf(body: ChatRequestBody): string {
  const newest = body.messages.map((m) => m.role).lastIndexOf('user');
  const message = body.messages[newest - 1];
  expect(message?.role).toBe('system');
  return String(message?.content);
}
