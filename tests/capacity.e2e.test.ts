import { Api } from '../scripts/lib/api';
import { FakeModel, lastMessage, type FakeReply } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';

/**
 * docs/agent.md#capacity: a turn waiting for the model holds no job slot, a busy database pool
 * makes work wait instead of failing, MODEL_CONCURRENCY makes model calls wait their turn, and a
 * worker killed while its model call is parked hands the turn over like any other crash. Speed itself is measured by `npm run bench`, not here.
 */
const model = new FakeModel();
/** Per test: what the model answers (the user's text decides). */
let reply: (userText: string, body: Parameters<FakeModel['script']>[0]) => FakeReply | Promise<FakeReply>;

beforeAll(async () => {
  await model.start();
  model.script = (body) => {
    const first = body.messages.find((message) => message.role === 'user');
    return reply(String(first?.content ?? ''), body);
  };
});

afterAll(async () => {
  await model.stop();
});

async function autonomousUser(system: TestSystem, name: string): Promise<Api & { userId: string }> {
  return new Api(system.url).createUser(system.adminToken, { name, preferences: { autonomous_mode: true } });
}

/** The whole system for one describe block, with these settings. */
function systemWith(env: Record<string, string>): TestSystem {
  const system = new TestSystem();
  beforeAll(async () => {
    await system.start({ env: { OPENAI_BASE_URL: model.url, ...env } });
  });
  afterAll(async () => {
    await system.stop();
  });
  return system;
}

describe('with one job slot per worker (WORKER_CONCURRENCY=1)', () => {
  const system = systemWith({ WORKER_CONCURRENCY: '1' });

  it('runs the model calls of two conversations at the same time', async () => {
    // Each call answers once both are in flight, or alone after 30 s: with the slot held during
    // a call, the second could not start before the first ended.
    let arrivals = 0;
    let answeredTogether = 0;
    let bothArrived: () => void = () => undefined;
    const both = new Promise<void>((resolve) => (bothArrived = resolve));
    reply = async () => {
      arrivals += 1;
      if (arrivals === 2) bothArrived();
      const together = await Promise.race([
        both.then(() => true),
        new Promise<boolean>((resolve) => setTimeout(() => resolve(false), 30_000)),
      ]);
      if (together) answeredTogether += 1;
      return { content: 'Both of you at once.' };
    };
    const [ana, bia] = await Promise.all([autonomousUser(system, 'Ana'), autonomousUser(system, 'Bia')]);
    const sent = await Promise.all([ana.send('parallel one'), bia.send('parallel two')]);
    const turns = await Promise.all(sent.map((turn, n) => (n === 0 ? ana : bia).events(turn.turn_id, { timeoutMs: 60_000 })));
    for (const events of turns) expect(events?.at(-1)?.data.status).toBe('completed');
    expect(answeredTogether).toBe(2);
  }, 90_000);

  it('retries a slow model call that failed after its job let go of the slot', async () => {
    let calls = 0;
    reply = () => {
      calls += 1;
      return calls === 1 ? { delayMs: 300, status: 500, content: 'overloaded' } : { content: 'Second time lucky.' };
    };
    const user = await autonomousUser(system, 'Caio');
    const { events } = await user.converse('slow failure');
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(events.find((event) => event.event === 'message')?.data.content).toBe('Second time lucky.');
    expect(calls).toBe(2);
  });

  it('finishes the turn on a new agent worker after kill -9 while the model was answering', async () => {
    let calls = 0;
    let firstArrived: () => void = () => undefined;
    const arrived = new Promise<void>((resolve) => (firstArrived = resolve));
    reply = () => {
      calls += 1;
      if (calls === 1) {
        firstArrived();
        return { delayMs: 20_000, content: 'never delivered' };
      }
      return { content: 'Answered by the new worker.' };
    };
    const user = await autonomousUser(system, 'Duda');
    const { turn_id: turnId } = await user.send('crash while parked');
    await arrived;
    await system.signal('agent-worker', 'SIGKILL');
    system.spawn('agent-worker');
    const events = await user.events(turnId, { timeoutMs: 30_000 });
    expect(events.at(-1)?.data.status).toBe('completed');
    expect(events.filter((event) => event.event === 'message').map((event) => event.data.content)).toEqual(['Answered by the new worker.']);
  });
});

/** Many conversations at once, each creating two rows through refs: every turn completes and no tool fails. */
async function twoFoldersInEachOf(system: TestSystem, conversations: number): Promise<void> {
  let folder = 0;
  reply = (_text, body) =>
    lastMessage(body).role === 'user'
      ? {
          toolCalls: [
            { name: 'create_folder', arguments: { name: `Crowd ${(folder += 1)}` } },
            { name: 'create_folder', arguments: { name: `Crowd ${(folder += 1)}` } },
          ],
        }
      : { content: 'Both folders are there.' };
  const users = await Promise.all(Array.from({ length: conversations }, (_, n) => autonomousUser(system, `Crowd ${n}`)));
  // Generous bounds: on a loaded machine many turns at once take a while; they must not fail.
  const turns = await Promise.all(
    users.map(async (user) => user.events((await user.send('two folders please')).turn_id, { timeoutMs: 120_000 })),
  );
  expect(turns.map((events) => events.at(-1)?.data.status)).toEqual(users.map(() => 'completed'));
  for (const events of turns) expect(events.filter((event) => event.event === 'tool_failed')).toEqual([]);
}

describe('with far more job slots than pooled connections (WORKER_CONCURRENCY=1000)', () => {
  const system = systemWith({ WORKER_CONCURRENCY: '1000' });

  it('completes every turn of many conversations at once, each creating rows through refs', async () => {
    await twoFoldersInEachOf(system, 40);
  }, 180_000);
});

describe('with the smallest database pool (DATABASE_POOL_SIZE=2)', () => {
  const system = systemWith({ DATABASE_POOL_SIZE: '2' });

  it('completes every turn of many conversations at once: a tool attempt waits for both of its connections', async () => {
    await twoFoldersInEachOf(system, 20);
  }, 180_000);
});

describe('with one model call in flight per agent worker (MODEL_CONCURRENCY=1, WORKER_CONCURRENCY=1)', () => {
  const system = systemWith({ MODEL_CONCURRENCY: '1', WORKER_CONCURRENCY: '1' });

  it('makes the calls one after another, and every conversation still finishes', async () => {
    reply = () => ({ delayMs: 300, content: 'One at a time.' });
    const before = model.requests.length;
    const users = await Promise.all(['Lia', 'Max', 'Noa'].map((name) => autonomousUser(system, name)));
    const turns = await Promise.all(
      users.map(async (user) => user.events((await user.send('take your turn')).turn_id, { timeoutMs: 60_000 })),
    );
    expect(turns.map((events) => events.at(-1)?.data.status)).toEqual(['completed', 'completed', 'completed']);
    // Each call started only once the one before it had ended: a waiting step made no request.
    const calls = model.requests.slice(before).sort((a, b) => a.startedAt - b.startedAt);
    expect(calls).toHaveLength(3);
    for (let n = 1; n < calls.length; n++) expect(calls[n]?.startedAt).toBeGreaterThanOrEqual(calls[n - 1]?.endedAt ?? Infinity);
  }, 90_000);
});
