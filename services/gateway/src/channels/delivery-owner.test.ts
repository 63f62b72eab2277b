import { randomUUID } from 'node:crypto';
import { createDb } from '@assistant/shared';
import { insertTestUser } from '../../../../tests/helpers/db';
import { claimPart } from './delivery-owner';

const db = createDb(process.env.DATABASE_URL as string, { max: 2 });
afterAll(() => db.end());

describe('claimPart', () => {
  it("records a turn's event with its turn, which the retention keeps it for, and a notice with none", async () => {
    const { userId, sessionId } = await insertTestUser(db);
    const turn = await db.query<{ id: string }>(
      `INSERT INTO turns (user_id, session_id, session_key, input) VALUES ($1, $2, 'agent:main:main', 'hi') RETURNING id`,
      [userId, sessionId],
    );
    const turnId = turn.rows[0]?.id as string;
    const part = (key: string) => ({ key, index: 0, channel: 'telegram', recipient: '42', notice: null });
    const [event, notice] = [`deliver.${randomUUID()}`, `notify.${randomUUID()}`];

    expect(await claimPart(db, { turnId }, part(event))).toBe('claimed');
    expect(await claimPart(db, { userId }, part(notice))).toBe('claimed');
    const recorded = await db.query<{ delivery_key: string; turn_id: string | null }>(
      'SELECT delivery_key, turn_id FROM deliveries WHERE delivery_key = ANY($1) ORDER BY delivery_key',
      [[event, notice]],
    );
    expect(recorded.rows).toEqual([
      { delivery_key: event, turn_id: turnId },
      { delivery_key: notice, turn_id: null },
    ]);
  });
});
