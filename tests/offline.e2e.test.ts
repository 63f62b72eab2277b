import type pg from 'pg';
import { DateTime } from 'luxon';
import { Api } from '../scripts/lib/api';
import { testDb } from './helpers/db';
import { TestSystem } from '../scripts/lib/system';

/** The README's first steps, with no model configured: the offline planner (docs/agent.md#offline-planner). */
const system = new TestSystem();
let db: pg.Pool;

beforeAll(async () => {
  db = testDb();
  await system.start();
});

afterAll(async () => {
  await system.stop();
  await db.end();
});

it('creates a folder (approved by hand) and a document in it (autonomous), ending each turn completed', async () => {
  const user = await new Api(system.url).createUser(system.adminToken, { name: 'Ana' });

  const { turn_id: first } = await user.send('create folder Work');
  const waiting = await user.events(first, { until: (event) => event.event === 'tool_approval_request' });
  expect(waiting.at(-1)?.data).toMatchObject({ tool_name: 'create_folder', arguments: { name: 'Work' } });
  const [approval] = (await user.get('/v1/approvals?status=pending')).body;
  expect((await user.post(`/v1/approvals/${approval.id}`, { decision: 'approve' })).status).toBe(200);
  const firstEvents = await user.events(first);
  expect(firstEvents.at(-1)?.data.status).toBe('completed');
  expect(String(firstEvents.find((event) => event.event === 'message')?.data.content)).toContain('[ID: folder_1]');

  expect((await user.patch('/v1/preferences', { autonomous_mode: true })).status).toBe(200);
  const second = await user.converse('create document Plan in Work');
  expect(second.events.map((event) => event.event)).toEqual(expect.arrayContaining(['tool_start', 'tool_complete', 'token', 'message']));
  expect(second.events.at(-1)?.data.status).toBe('completed');

  const rows = await db.query('SELECT f.name, d.title FROM folders f JOIN documents d ON d.folder_id = f.id WHERE f.user_id = $1', [
    user.userId,
  ]);
  expect(rows.rows).toEqual([{ name: 'Work', title: 'Plan' }]);
});

it('answers anything else with help text that says it is not a language model', async () => {
  const user = await new Api(system.url).createUser(system.adminToken);
  const { events } = await user.converse('what is the meaning of life?');
  expect(String(events.find((event) => event.event === 'message')?.data.content)).toMatch(/not a language model/);
  expect(events.at(-1)?.data.status).toBe('completed');
});

it("runs the first 10 commands of a 16,000-character chain and says so; another user's turn sent alongside completes", async () => {
  const api = new Api(system.url);
  const [flooder, other] = await Promise.all([
    api.createUser(system.adminToken, { preferences: { autonomous_mode: true } }),
    api.createUser(system.adminToken),
  ]);
  let chain = 'create folder f1';
  for (let n = 2; chain.length < 15_950; n++) chain += ` and create folder f${n}`;
  const commands = chain.split(' and ').length;

  const [flood, quick] = await Promise.all([flooder.converse(chain), other.converse('list habits')]);
  expect(quick.events.at(-1)?.data.status).toBe('completed');
  expect(flood.events.at(-1)?.data.status).toBe('completed');
  expect(flood.events.filter((event) => event.event === 'tool_complete')).toHaveLength(10);
  expect(String(flood.events.findLast((event) => event.event === 'message')?.data.content)).toContain(
    `Only the first 10 of your ${commands} commands were planned`,
  );
  const folders = await db.query<{ name: string }>('SELECT name FROM folders WHERE user_id = $1 ORDER BY created_at, name', [
    flooder.userId,
  ]);
  expect(folders.rows.map((row) => row.name).sort()).toEqual(Array.from({ length: 10 }, (_, i) => `f${i + 1}`).sort());
});

it("reads reminder times in the user's zone (São Paulo): tomorrow at 9, every Monday at 8, in 20 minutes", async () => {
  const user = await new Api(system.url).createUser(system.adminToken, {
    preferences: { autonomous_mode: true, timezone: 'America/Sao_Paulo' },
  });
  const before = DateTime.now().setZone('America/Sao_Paulo');
  const { events } = await user.converse(
    'remind me tomorrow at 9 to call mom; me lembra toda segunda às 8 de regar as plantas; remind me in 20 minutes to stretch',
  );
  const after = DateTime.now();
  expect(events.at(-1)?.data.status).toBe('completed');

  const rows = await db.query<{ text: string; at: Date; repeat: string | null }>(
    'SELECT text, at, repeat FROM reminders WHERE user_id = $1 ORDER BY text',
    [user.userId],
  );
  const tomorrowAt9 = before.plus({ days: 1 }).set({ hour: 9, minute: 0, second: 0, millisecond: 0 });
  const mondayAt8 = before.set({ hour: 8, minute: 0, second: 0, millisecond: 0 }).plus({ days: (8 - before.weekday) % 7 });
  expect(rows.rows.map((row) => row.text)).toEqual(['call mom', 'regar as plantas', 'stretch']);
  expect(rows.rows[0]).toEqual({ text: 'call mom', at: tomorrowAt9.toJSDate(), repeat: null });
  expect(rows.rows[1]).toEqual({
    text: 'regar as plantas',
    at: (mondayAt8 <= before ? mondayAt8.plus({ weeks: 1 }) : mondayAt8).toJSDate(),
    repeat: 'weekly',
  });
  // Read in UTC, "in 20 minutes" would become a São Paulo wall clock three hours off.
  const stretch = rows.rows[2]?.at.getTime() ?? 0;
  expect(stretch).toBeGreaterThanOrEqual(before.plus({ minutes: 20 }).startOf('second').toMillis());
  expect(stretch).toBeLessThanOrEqual(after.plus({ minutes: 20 }).toMillis());
});

it('reads a command as typed on a phone: polite words, a quoted name, an emoji, and a second command', async () => {
  const user = await new Api(system.url).createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const { events } = await user.converse('Você pode criar a pasta «Plano 2026»? 👍 e me mostra meus hábitos');
  expect(events.filter((event) => event.event === 'tool_complete').map((event) => event.data.tool_name)).toEqual([
    'create_folder',
    'list_habits',
  ]);
  expect(events.at(-1)?.data.status).toBe('completed');
  const folders = await db.query<{ name: string }>('SELECT name FROM folders WHERE user_id = $1', [user.userId]);
  expect(folders.rows).toEqual([{ name: 'Plano 2026' }]);
});

it("does what the contract's own examples say, leaving the rows they name, and helps in Portuguese", async () => {
  const user = await new Api(system.url).createUser(system.adminToken, { preferences: { autonomous_mode: true } });
  const toolsOf = (events: Array<{ event: string; data: Record<string, unknown> }>) =>
    events.filter((event) => event.event === 'tool_complete').map((event) => event.data.tool_name);
  const examples: [string, string][] = [
    ['create folder Work', 'create_folder'],
    ['criar hábito meditação diária', 'save_habit'],
    ['create document Plan in Work', 'create_document'],
    ['rename document Plan to Plan 2026', 'rename_document'],
    ['remind me to drink water at 15:00', 'create_reminder'],
  ];
  for (const [text, tool] of examples) {
    const { events } = await user.converse(text);
    expect([text, toolsOf(events), events.at(-1)?.data.status]).toEqual([text, [tool], 'completed']);
  }
  const listed = await user.converse('list habits');
  expect(toolsOf(listed.events)).toEqual(['list_habits']);
  expect(String(listed.events.findLast((event) => event.event === 'message')?.data.content)).toContain('meditação');

  const rows = await db.query(
    `SELECT (SELECT json_agg(name) FROM folders WHERE user_id = $1) AS folders,
            (SELECT json_agg(json_build_object('name', name, 'frequency', frequency)) FROM habits WHERE user_id = $1) AS habits,
            (SELECT json_agg(title) FROM documents WHERE user_id = $1) AS documents,
            (SELECT json_agg(json_build_object('text', text, 'at', to_char(at AT TIME ZONE 'UTC', 'HH24:MI'))) FROM reminders WHERE user_id = $1) AS reminders`,
    [user.userId],
  );
  expect(rows.rows[0]).toEqual({
    folders: ['Work'],
    habits: [{ name: 'meditação', frequency: 'daily' }],
    documents: ['Plan 2026'],
    reminders: [{ text: 'drink water', at: '15:00' }],
  });

  const help = await user.converse('oi, tudo bem?');
  expect(String(help.events.find((event) => event.event === 'message')?.data.content)).toMatch(/não um modelo de linguagem/);
});
