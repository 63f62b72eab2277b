import { randomUUID } from 'node:crypto';
import { createDb, type Db } from '@assistant/shared';
import { CHANNEL_MESSAGE_RETENTION_DAYS, pruneChannelMessages } from './channel-message-retention';

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
