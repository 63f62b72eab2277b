import { insertTestUser } from '../../../../tests/helpers/db';
import { createDb, type Db } from '../db';
import { SessionHistories } from './session-histories';
import { loadStepInput } from './step-input';

/** A model step's one read: the user's settings, the session's history in order, the pitfalls that apply. */
let db: Db;

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string, { max: 2 });
});

afterAll(async () => {
  await db.end();
});

const options = { defaultBudget: 0, tools: ['create_folder'], pitfallsShown: 2, histories: new SessionHistories(3, 1_000_000) };

describe('loadStepInput', () => {
  it('reads the latest messages oldest first, with their tool calls, and only the pitfalls of the tools offered', async () => {
    const scope = await insertTestUser(db, 'step input');
    const calls = [{ id: 'call_1', name: 'create_folder', arguments: '{"name":"Work"}' }];
    for (const [role, content, toolCalls, callId] of [
      ['user', 'too old to be read', null, null],
      ['user', 'make a folder', null, null],
      ['assistant', '', JSON.stringify(calls), null],
      ['tool', '{"success":true}', null, 'call_1'],
    ] as const) {
      await db.query(`INSERT INTO messages (session_id, role, content, tool_calls, tool_call_id) VALUES ($1, $2, $3, $4, $5)`, [
        scope.sessionId,
        role,
        content,
        toolCalls,
        callId,
      ]);
    }
    for (const [tool, description, seenMinutesAgo] of [
      ['create_folder', 'older folder pitfall', 30],
      [null, 'general pitfall', 10],
      ['rename_document', 'pitfall of a tool not offered', 5],
      ['create_folder', 'newest folder pitfall', 1],
    ] as const) {
      await db.query(
        `INSERT INTO gotchas (user_id, tool_name, description, source, last_seen_at) VALUES ($1, $2, $3, 'manual', NOW() - make_interval(mins => $4))`,
        [scope.userId, tool, description, seenMinutesAgo],
      );
    }

    const input = await loadStepInput(db, scope, options);

    expect(input.history).toEqual([
      { role: 'user', content: 'make a folder', tool_calls: null, tool_call_id: null },
      { role: 'assistant', content: '', tool_calls: calls, tool_call_id: null },
      { role: 'tool', content: '{"success":true}', tool_calls: null, tool_call_id: 'call_1' },
    ]);
    expect(input.pitfalls.map((pitfall) => pitfall.description)).toEqual(['newest folder pitfall', 'general pitfall']);
    expect(input.user.timeZone).toBe('UTC');
  });

  it('answers empty history and pitfalls for a new session', async () => {
    const input = await loadStepInput(db, await insertTestUser(db, 'step input'), options);
    expect(input.history).toEqual([]);
    expect(input.pitfalls).toEqual([]);
    expect(input.user.assistant.name).toBe('Nexo');
  });
});
