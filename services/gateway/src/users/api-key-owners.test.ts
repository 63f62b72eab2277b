import { randomUUID } from 'node:crypto';
import { once } from 'node:events';
import { createClientRedis, createDb, createWorkerRedis, type Db, type Redis } from '@assistant/shared';
import { insertTestUser } from '../../../../tests/helpers/db';
import { ApiKeyOwners } from './api-key-owners';
import { issueApiKey } from './users.service';

const prefix = `${process.env.QUEUE_PREFIX}-owners-${randomUUID().slice(0, 8)}`;
let db: Db;
let redis: Redis;
const subscribers: Redis[] = [];

beforeAll(() => {
  db = createDb(process.env.DATABASE_URL as string, { max: 2 });
  redis = createClientRedis(process.env.REDIS_URL as string);
});

afterAll(async () => {
  await Promise.all([redis.quit(), ...subscribers.map((subscriber) => subscriber.quit().catch(() => undefined))]);
  await db.end();
});

const noWarning = (error: unknown) => {
  throw error;
};

/** A gateway's owners; listening on a subscriber of their own unless told otherwise, and subscribed before this answers. */
async function gateway(listening = true): Promise<{ owners: ApiKeyOwners; subscriber: Redis }> {
  const owners = new ApiKeyOwners(db, redis, prefix, noWarning);
  const subscriber = createWorkerRedis(process.env.REDIS_URL as string);
  subscribers.push(subscriber);
  if (listening) {
    owners.listen(subscriber);
    await once(subscriber, 'ready');
    // The subscription is the connection's next reply: a ping behind it answers once it holds.
    await new Promise<void>((resolve) => setImmediate(resolve));
    await subscriber.ping();
  }
  return { owners, subscriber };
}

async function keyOfNewUser(): Promise<{ userId: string; apiKey: string; keyId: string }> {
  const { userId } = await insertTestUser(db, 'owners');
  const key = await issueApiKey(db, userId, 'test');
  return { userId, apiKey: key.api_key, keyId: key.id };
}

/** The statements that read keys' owners while `run` runs. */
async function ownerReads(run: () => Promise<unknown>): Promise<number> {
  const query = jest.spyOn(db, 'query');
  try {
    await run();
    return query.mock.calls.filter(([text]) => String(text).includes('FROM api_keys')).length;
  } finally {
    query.mockRestore();
  }
}

describe('ApiKeyOwners', () => {
  it('reads a key once while it listens for changes, and on every request when it does not', async () => {
    const { userId, apiKey, keyId } = await keyOfNewUser();
    const listening = (await gateway()).owners;
    const deaf = (await gateway(false)).owners;
    const threeTimes = async (owners: ApiKeyOwners) => {
      for (let i = 0; i < 3; i++) expect(await owners.ownerOf(apiKey)).toEqual({ keyId, userId, disabled: false });
    };
    expect(await ownerReads(() => threeTimes(listening))).toBe(1);
    expect(await ownerReads(() => threeTimes(deaf))).toBe(3);
  });

  it('never keeps an unknown key', async () => {
    const { owners } = await gateway();
    expect(await ownerReads(async () => [await owners.ownerOf('ak_unknown'), await owners.ownerOf('ak_unknown')])).toBe(2);
  });

  it('forgets a changed user at once on the gateway that made the change, and on the others when its announcement arrives', async () => {
    const { userId, apiKey, keyId } = await keyOfNewUser();
    const here = await gateway();
    const there = await gateway();
    for (const { owners } of [here, there]) await owners.ownerOf(apiKey);

    await db.query('UPDATE users SET disabled_at = NOW() WHERE id = $1', [userId]);
    const heard = once(there.subscriber, 'message');
    await here.owners.changed(userId);
    expect(await here.owners.ownerOf(apiKey)).toEqual({ keyId, userId, disabled: true });
    await heard;
    expect(await there.owners.ownerOf(apiKey)).toEqual({ keyId, userId, disabled: true });

    await db.query('UPDATE api_keys SET revoked_at = NOW() WHERE id = $1', [keyId]);
    const heardAgain = once(there.subscriber, 'message');
    await here.owners.changed(userId);
    await heardAgain;
    expect(await here.owners.ownerOf(apiKey)).toBeUndefined();
    expect(await there.owners.ownerOf(apiKey)).toBeUndefined();
  });

  it('keeps nothing once its subscriber has disconnected, since it could miss a change', async () => {
    const { userId, apiKey, keyId } = await keyOfNewUser();
    const { owners, subscriber } = await gateway();
    await owners.ownerOf(apiKey);
    const closed = once(subscriber, 'close');
    subscriber.disconnect();
    await closed;
    // Revoked while nobody announces it to this gateway.
    await db.query('UPDATE api_keys SET revoked_at = NOW() WHERE id = $1', [keyId]);
    expect(await owners.ownerOf(apiKey)).toBeUndefined();
    await db.query('UPDATE api_keys SET revoked_at = NULL WHERE id = $1', [keyId]);
    expect(await ownerReads(async () => [await owners.ownerOf(apiKey), await owners.ownerOf(apiKey)])).toBe(2);
    expect(await owners.ownerOf(apiKey)).toEqual({ keyId, userId, disabled: false });
  });

  it('does not keep what a read found when a change was announced while it ran', async () => {
    const { userId, apiKey } = await keyOfNewUser();
    const { owners } = await gateway();
    const read = owners.ownerOf(apiKey);
    await owners.changed(userId);
    await read;
    expect(await ownerReads(() => owners.ownerOf(apiKey))).toBe(1);
  });
});
