import { publishing } from '../../../../tests/helpers/publishing';
import { eventKeys } from '../events';
import { answer, claimModelCall } from './model-steps';
import { loadTurnState } from './turn-state';

/** A step's events go out after the text it streamed, which need not be written before its rows are stored. */
const { db, redis, prefix, outbox, close } = publishing('model-steps');
afterAll(close);

const machine = { db, outbox, approvalTtlSeconds: 60, maxToolCallsPerStep: 8, maxActiveTurnsPerUser: 4, sessionIdleSeconds: 3600 };

async function runningTurn(): Promise<string> {
  const user = await db.query<{ id: string }>(`INSERT INTO users (display_name) VALUES ('steps') RETURNING id`);
  const session = await db.query<{ id: string }>(
    `INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main') RETURNING id`,
    [user.rows[0]?.id],
  );
  const turn = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, status)
     VALUES ($1, $2, 'agent:main:main', 'hi', 'running') RETURNING id`,
    [user.rows[0]?.id, session.rows[0]?.id],
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
