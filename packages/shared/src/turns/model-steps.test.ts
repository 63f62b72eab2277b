import { publishing } from '../../../../tests/helpers/publishing';
import { eventKeys } from '../events';
import { answer, claimModelCall, planTasks } from './model-steps';
import { loadTurnState, type PlannedCall } from './turn-state';

/** A step's events go out after the text it streamed, which need not be written before its rows are stored. */
const { db, redis, prefix, outbox, close } = publishing('model-steps');
afterAll(close);

const machine = { db, outbox, approvalTtlSeconds: 60, maxToolCallsPerStep: 8, maxActiveTurnsPerUser: 4, sessionIdleSeconds: 3600 };

async function newUser(): Promise<string> {
  const user = await db.query<{ id: string }>(`INSERT INTO users (display_name) VALUES ('steps') RETURNING id`);
  return user.rows[0]?.id as string;
}

/** A running turn of the user's (a new user's by default), in a session of its own. */
async function runningTurn(userId?: string): Promise<string> {
  const user = userId ?? (await newUser());
  const session = await db.query<{ id: string }>(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:api:direct:' || gen_random_uuid()) RETURNING id, session_key`,
    [user],
  );
  const turn = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, status)
     SELECT user_id, id, session_key, 'hi', 'running' FROM sessions WHERE id = $1 RETURNING id`,
    [session.rows[0]?.id],
  );
  return turn.rows[0]?.id as string;
}

const streamTypes = async (turnId: string) =>
  (await redis.xrange(eventKeys(prefix, turnId).stream, '-', '+')).map(([, fields]) => fields[fields.indexOf('type') + 1]);

describe('answer', () => {
  it("stores the answer while the step's streamed text is still being written, and publishes its events after that text", async () => {
    const turnId = await runningTurn();
    const state = await loadTurnState(db, turnId);
    if (!state || !(await claimModelCall(db, state, 'job-1'))) throw new Error('the turn could not be claimed');

    let written: () => void = () => undefined;
    const text = new Promise<void>((resolve) => (written = resolve));
    const answered = answer(machine, state, 'job-1', 'Hello', 'completed', { countIteration: true, earlierEvents: () => text });
    const status = async () => (await db.query<{ status: string }>('SELECT status FROM turns WHERE id = $1', [turnId])).rows[0]?.status;
    for (let i = 0; i < 200 && (await status()) !== 'completed'; i++) await new Promise((resolve) => setTimeout(resolve, 10));
    expect(await status()).toBe('completed');
    expect(await streamTypes(turnId)).toEqual([]);

    written();
    expect(await answered).toBe(true);
    expect(await streamTypes(turnId)).toEqual(['message', 'done']);
  });
});

describe('planTasks', () => {
  /** A step of the user's where the model called rename_document with arguments that are not JSON, and a tool that does not exist. */
  async function refusedStep(userId: string, n: number): Promise<{ recorded: boolean | 'dispatched'; again: boolean | 'dispatched' }> {
    const turnId = await runningTurn(userId);
    const state = await loadTurnState(db, turnId);
    const claimed = state && (await claimModelCall(db, state, `job-${n}`));
    if (!state || !claimed) throw new Error('the turn could not be claimed');
    const calls: PlannedCall[] = [
      {
        id: 'call_1',
        name: 'rename_document',
        arguments: '{}',
        problem: `The arguments were not valid JSON (they began: "{title: ${n}").`,
        mistake: 'The arguments were not valid JSON.',
      },
      { id: 'call_2', name: 'fly_to_moon', arguments: '{}', problem: 'There is no tool named "fly_to_moon".' },
    ];
    const step = { content: '', calls, timeZone: 'UTC' };
    const recorded = await planTasks(machine, state, claimed, step);
    // The job run again (its first run died before it could finish): the claim is gone, nothing is stored or counted.
    return { recorded, again: await planTasks(machine, state, claimed, step) };
  }

  const gotchas = async (userId: string) =>
    (await db.query('SELECT tool_name, pattern, occurrences FROM gotchas WHERE user_id = $1', [userId])).rows;

  it("counts a refused call of a known tool once toward the tool's gotchas, as the tool worker counts the calls it refuses", async () => {
    const userId = await newUser();
    for (const n of [1, 2]) expect(await refusedStep(userId, n)).toEqual({ recorded: true, again: false });
    expect(await gotchas(userId)).toEqual([]);
    await refusedStep(userId, 3);
    // An unknown tool is in play in no step, so no gotcha about it could ever be shown: it is not counted.
    expect(await gotchas(userId)).toEqual([
      { tool_name: 'rename_document', pattern: 'The arguments were not valid JSON.', occurrences: 3 },
    ]);
    const counted = await db.query('SELECT tool_name FROM tool_error_counts WHERE user_id = $1', [userId]);
    expect(counted.rows).toEqual([{ tool_name: 'rename_document' }]);
  });
});
