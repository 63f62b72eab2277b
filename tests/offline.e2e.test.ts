import type pg from 'pg';
import { Api } from './helpers/api';
import { testDb } from './helpers/db';
import { TestSystem } from './helpers/system';

/** The README's first steps, with no model configured: the offline planner (CONTRACT §9). */
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
  const user = await new Api(system.url).createUser(system.adminToken, 'Ana');

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

  const rows = await db.query('SELECT f.name, d.title FROM folders f JOIN documents d ON d.folder_id = f.id WHERE f.user_id = $1', [user.userId]);
  expect(rows.rows).toEqual([{ name: 'Work', title: 'Plan' }]);
});

it('answers anything else with help text that says it is not a language model', async () => {
  const user = await new Api(system.url).createUser(system.adminToken);
  const { events } = await user.converse('what is the meaning of life?');
  expect(String(events.find((event) => event.event === 'message')?.data.content)).toMatch(/not a language model/);
  expect(events.at(-1)?.data.status).toBe('completed');
});
