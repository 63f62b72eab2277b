import { randomUUID } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import express from 'express';
import {
  addOutboxJob,
  createClientRedis,
  createDb,
  createLogger,
  createQueues,
  instantOf,
  parseConfig,
  reminderFireJob,
  reminderFireJobId,
  wallClockOf,
  wallClockText,
  type Db,
  type Queues,
  type Redis,
  type Runtime,
} from '@assistant/shared';
import { insertTestUser } from '../../../../tests/helpers/db';
import { errorHandler } from '../http/errors';
import { MAX_SETTINGS_BYTES, preferenceRoutes } from './preferences.routes';

let db: Db;
let redis: Redis;
let queues: Queues;
let server: ReturnType<express.Express['listen']>;
let url: string;

beforeAll(async () => {
  db = createDb(process.env.DATABASE_URL as string, { max: 3 });
  redis = createClientRedis(process.env.REDIS_URL as string);
  queues = createQueues(redis, `${process.env.QUEUE_PREFIX}-preferences-${randomUUID().slice(0, 8)}`, () => undefined);
  const app = express().use(express.json());
  // Signed in as the user the request names: the API key check is not what these tests are about.
  app.use((req, _res, next) => {
    req.userId = req.get('x-user');
    next();
  });
  app.use(preferenceRoutes({ db, queues, config: parseConfig({}) } as Runtime));
  app.use(errorHandler(createLogger('preferences-test', 'silent')));
  server = app.listen(0, '127.0.0.1');
  await new Promise((resolve) => server.once('listening', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});

afterAll(async () => {
  server.close();
  await queues.close();
  await redis.quit();
  await db.end();
});

const DAY = 86_400_000;

const patch = (userId: string, body: unknown) =>
  fetch(`${url}/v1/preferences`, {
    method: 'PATCH',
    headers: { 'content-type': 'application/json', 'x-user': userId },
    body: JSON.stringify(body),
  });

/** 09:00 two days from now in `zone`, as create_reminder stores it: the row, and its fire job from the turn's outbox. */
async function reminderAtNine(userId: string, zone: string, repeat: 'daily' | null): Promise<string> {
  const wall = { ...wallClockOf(new Date(Date.now() + 2 * DAY), zone), hour: 9, minute: 0, second: 0, millisecond: 0 };
  const id = randomUUID();
  const at = instantOf(wall, zone);
  await db.query(
    `INSERT INTO reminders (id, user_id, text, text_key, at, repeat, local_at) VALUES ($1, $2, 'Stretch', 'stretch', $3, $4, $5)`,
    [id, userId, at, repeat, wallClockText(wall)],
  );
  await addOutboxJob(queues, reminderFireJob(id, at));
  return id;
}

/** Where a reminder fires, and what its job for that time is doing. */
async function schedule(id: string): Promise<{ at: Date; job: string }> {
  const found = await db.query<{ at: Date }>('SELECT at FROM reminders WHERE id = $1', [id]);
  const at = found.rows[0]?.at as Date;
  return { at, job: await queues.reminders.getJobState(reminderFireJobId(id, at)) };
}

describe('a change of time zone', () => {
  it('never leaves a reminder without the job of its time: a failure while queuing the jobs answers 503 and changes nothing', async () => {
    const { userId } = await insertTestUser(db);
    await db.query("INSERT INTO user_preferences (user_id, timezone) VALUES ($1, 'America/Sao_Paulo')", [userId]);
    const reminders = [await reminderAtNine(userId, 'America/Sao_Paulo', null), await reminderAtNine(userId, 'America/Sao_Paulo', 'daily')];
    const before = await Promise.all(reminders.map(schedule));
    expect(before.map(({ job }) => job)).toEqual(['delayed', 'delayed']);

    // Redis drops after the first job: the same as the gateway dying there, before the rest are queued.
    const add = queues.reminders.add.bind(queues.reminders);
    const adds = jest.spyOn(queues.reminders, 'add').mockImplementation((...args) => {
      if (adds.mock.calls.length > 1) return Promise.reject(new Error('Connection is closed.'));
      return add(...args);
    });
    const failed = await patch(userId, { timezone: 'Asia/Tokyo' });
    adds.mockRestore();
    expect(failed.status).toBe(503);
    expect((await db.query('SELECT timezone FROM user_preferences WHERE user_id = $1', [userId])).rows[0]).toEqual({
      timezone: 'America/Sao_Paulo',
    });
    expect(await Promise.all(reminders.map(schedule))).toEqual(before);

    // Asked again, the change goes through: each reminder at 09:00 in Tokyo, 12 hours earlier, with its job.
    expect((await patch(userId, { timezone: 'Asia/Tokyo' })).status).toBe(200);
    const after = await Promise.all(reminders.map(schedule));
    for (const [i, moved] of after.entries()) {
      expect(moved).toEqual({ at: new Date((before[i]?.at.getTime() as number) - 12 * 3_600_000), job: 'delayed' });
    }
  });
});

describe('settings', () => {
  it('grow only up to MAX_SETTINGS_BYTES of JSON: a PATCH past it answers 400 and changes nothing', async () => {
    const { userId } = await insertTestUser(db);
    await db.query('INSERT INTO user_preferences (user_id) VALUES ($1)', [userId]);
    const half = 'x'.repeat(MAX_SETTINGS_BYTES / 2);
    expect((await patch(userId, { settings: { a: half } })).status).toBe(200);
    const refused = await patch(userId, { max_iterations: 3, settings: { b: half } });
    expect(refused.status).toBe(400);
    expect(await refused.json()).toMatchObject({ error: { details: [{ path: ['settings'], message: expect.stringContaining('65536') }] } });
    expect((await db.query('SELECT max_iterations, settings FROM user_preferences WHERE user_id = $1', [userId])).rows[0]).toEqual({
      max_iterations: 15,
      settings: { a: half },
    });
    // Replacing a key by a smaller value is a change like any other.
    expect((await patch(userId, { settings: { a: 'small', b: half } })).status).toBe(200);
  });
});
