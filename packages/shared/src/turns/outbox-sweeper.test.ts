import { insertTestUser } from '../../../../tests/helpers/db';
import { publishing } from '../../../../tests/helpers/publishing';
import type { Logger } from '../logger';
import { appendOutbox, outboxEvent, type OutboxEntry } from './outbox';
import { outboxSweep } from './outbox-sweeper';

const { db, outbox, close } = publishing('sweeper');
afterAll(close);

const outboxOf = async (turnId: string) =>
  (await db.query<{ outbox: OutboxEntry[] }>('SELECT outbox FROM turns WHERE id = $1', [turnId])).rows[0]?.outbox.map((entry) => entry.key);

async function turn(): Promise<string> {
  const { userId, sessionId } = await insertTestUser(db);
  const found = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input) VALUES ($1, $2, 'agent:main:main', 'hi') RETURNING id`,
    [userId, sessionId],
  );
  return found.rows[0]?.id as string;
}

describe('outbox sweeper', () => {
  it('publishes what stays pending across two sweeps, not a turn whose outbox moved on meanwhile', async () => {
    const sweep = outboxSweep({ db, outbox, logger: { warn: () => undefined } as unknown as Logger });
    const stuck = await turn();
    const moving = await turn();
    await appendOutbox(db, stuck, [outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' })]);
    const first = outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' });
    await appendOutbox(db, moving, [first]);
    await sweep();

    // The moving turn's batch was removed by its job and a later one is pending now.
    const later = outboxEvent({ type: 'task_list', tasks: [] });
    await db.query(`UPDATE turns SET outbox = $2::jsonb WHERE id = $1`, [moving, JSON.stringify([later])]);
    await sweep();
    expect(await outboxOf(stuck)).toEqual([]);
    expect(await outboxOf(moving)).toEqual([later.key]);

    await sweep();
    expect(await outboxOf(moving)).toEqual([]);
  });

  it('publishes what a turn left behind when it ended, and what a waiting turn left', async () => {
    const sweep = outboxSweep({ db, outbox, logger: { warn: () => undefined } as unknown as Logger });
    const ended = await turn();
    const waiting = await turn();
    await appendOutbox(db, ended, [outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' })]);
    await db.query(`UPDATE turns SET status = 'cancelled', finished_at = NOW() WHERE id = $1`, [ended]);
    await appendOutbox(db, waiting, [outboxEvent({ type: 'turn_started', session_key: 'agent:main:main' })]);
    await db.query(`UPDATE turns SET status = 'awaiting_approval' WHERE id = $1`, [waiting]);
    await sweep();
    await sweep();
    expect(await outboxOf(ended)).toEqual([]);
    expect(await outboxOf(waiting)).toEqual([]);
  });
});
