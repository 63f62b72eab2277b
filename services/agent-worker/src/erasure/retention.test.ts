import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '@assistant/shared';
import { insertTestUser } from '../../../../tests/helpers/db';
import { CHANNEL_MESSAGE_RETENTION_DAYS, DELIVERY_RETENTION_DAYS, pruneChannelMessages, pruneDeliveries } from './retention';

let db: Db;

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string);
});

afterAll(async () => {
  await db.end();
});

/** A channel message's record received `daysAgo`, of nobody's (a mistyped `/link` from an unknown chat) or a user's. */
async function received(daysAgo: number, userId: string | null = null): Promise<string> {
  const row = await db.query<{ id: string }>(
    `INSERT INTO channel_messages (channel, external_id, user_id, received_at)
     VALUES ('whatsapp', $1, $2, NOW() - make_interval(days => $3)) RETURNING id`,
    [`wamid.${randomUUID()}`, userId, daysAgo],
  );
  return row.rows[0]?.id as string;
}

describe('pruneChannelMessages', () => {
  it("deletes records past the retention, a user's and nobody's, and keeps those a redelivery may still need", async () => {
    const user = await db.query<{ id: string }>("INSERT INTO users (display_name) VALUES ('Retention test') RETURNING id");
    const old = [await received(CHANNEL_MESSAGE_RETENTION_DAYS + 1), await received(30, user.rows[0]?.id)];
    // Meta redelivers a webhook for up to 7 days.
    const recent = [await received(7), await received(0)];

    await pruneChannelMessages(db);
    const left = await db.query<{ id: string }>('SELECT id FROM channel_messages WHERE id = ANY($1)', [[...old, ...recent]]);
    expect(left.rows.map((row) => row.id).sort()).toEqual([...recent].sort());
  });
});

/** A chat turn finished `finishedHoursAgo` (null: unfinished). */
async function chatTurn(finishedHoursAgo: number | null): Promise<string> {
  const { userId, sessionId } = await insertTestUser(db);
  const row = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, finished_at)
     VALUES ($1, $2, 'agent:main:main', 'hi', NOW() - make_interval(hours => $3)) RETURNING id`,
    [userId, sessionId, finishedHoursAgo],
  );
  return row.rows[0]?.id as string;
}

/** The record of a message part sent `daysAgo`, of a turn's event or (no turn) a notice or reply; answers its key. */
async function sent(daysAgo: number, turnId: string | null = null): Promise<string> {
  const key = `deliver.${randomUUID()}`;
  await db.query(
    `INSERT INTO deliveries (delivery_key, part, channel, recipient, provider_message_id, turn_id, sent_at)
     VALUES ($1, 0, 'whatsapp', '5511999990000', $2, $3, NOW() - make_interval(days => $4))`,
    [key, `wamid.${randomUUID()}`, turnId, daysAgo],
  );
  return key;
}

describe('pruneDeliveries', () => {
  it('deletes parts sent past the retention, and keeps those a status webhook or a Redis come back empty may still need', async () => {
    const old = [await sent(DELIVERY_RETENTION_DAYS + 1), await sent(30, await chatTurn(24 * DELIVERY_RETENTION_DAYS + 1))];
    // Meta redelivers a status webhook for up to 7 days; an unfinished turn's events, or those of
    // one ended within a day, are queued again when Redis comes back empty, however long ago sent,
    // and such a delivery may still wait in its queue a day later (no gateway running meanwhile).
    const recent = [
      await sent(7),
      await sent(0),
      await sent(30, await chatTurn(null)),
      await sent(30, await chatTurn(2)),
      await sent(30, await chatTurn(25)),
    ];

    await pruneDeliveries(db);
    const left = await db.query<{ delivery_key: string }>('SELECT delivery_key FROM deliveries WHERE delivery_key = ANY($1)', [
      [...old, ...recent],
    ]);
    expect(left.rows.map((row) => row.delivery_key).sort()).toEqual([...recent].sort());
  });
});
