import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { FakeModel } from '../fake-model';

/** Skeleton turns run before it is sampled: as the system's warm-up does, this lets V8 compile the hot paths. */
const WARM_UP_TURNS = 1_500;

/**
 * The floor of a turn alone in this design: what the contract makes every turn do, and nothing
 * else, in a gateway, an agent worker and a tool worker of its own (turn-skeleton-process.ts).
 * A client's POST is stored and queued; the first step calls the model (the openai SDK, a 64 KB
 * history) and stores its tool calls; the tool worker stores two results; the second step calls
 * the model again and stores the answer; the client reads the events over SSE to `done`. Five
 * flushed commits, three BullMQ jobs, two model calls, the events on a Redis stream: no context,
 * no refs, no outbox, no validation. Kept open, like BareRoundTrip, to be sampled next to the
 * turns alone.
 */
export class TurnSkeleton {
  private constructor(
    private readonly url: string,
    private readonly model: FakeModel,
    private readonly processes: ChildProcess[],
    private readonly drop: () => Promise<void>,
  ) {}

  static async open(options: { redisUrl: string; postgresBase: string; name: string }): Promise<TurnSkeleton> {
    const admin = new pg.Client({ connectionString: `${options.postgresBase}/postgres` });
    await admin.connect();
    await admin.query(`CREATE DATABASE "${options.name}"`);
    const drop = async () => {
      await admin.query(`DROP DATABASE IF EXISTS "${options.name}" WITH (FORCE)`);
      await admin.end();
    };
    const databaseUrl = `${options.postgresBase}/${options.name}`;
    const setup = new pg.Client({ connectionString: databaseUrl });
    await setup.connect();
    await setup.query('CREATE TABLE skeleton_rows (id bigserial PRIMARY KEY, turn_id uuid NOT NULL, kind text NOT NULL, data jsonb)');
    await setup.end();
    const model = await new FakeModel().start();
    model.keep = () => undefined;
    model.script = (body) =>
      String(body.messages.at(-1)?.content).endsWith('step 1')
        ? {
            toolCalls: [
              { name: 'create_folder', arguments: { name: 'Skeleton' } },
              { name: 'search_documents', arguments: { query: 'skeleton' } },
            ],
          }
        : { content: 'Done: the folder is there and nothing matched the search.', chunkSize: 16 };
    const env = {
      ...process.env,
      SKELETON_REDIS_URL: options.redisUrl,
      SKELETON_DATABASE_URL: databaseUrl,
      SKELETON_PREFIX: options.name,
      SKELETON_MODEL_URL: model.url,
    };
    const processes = ['gateway', 'agent', 'tool'].map((role) =>
      fork(path.join(__dirname, 'turn-skeleton-process.js'), [role], { env, stdio: ['ignore', 'inherit', 'inherit', 'ipc'] }),
    );
    const ready = await Promise.all(
      processes.map(
        (child) =>
          new Promise<{ port?: number }>((resolve, reject) => {
            child.once('message', (message) => resolve(message as { port?: number }));
            child.once('exit', (code) => reject(new Error(`a turn skeleton process exited (${code}) before it was ready`)));
          }),
      ),
    );
    const skeleton = new TurnSkeleton(`http://127.0.0.1:${ready[0]?.port}`, model, processes, drop);
    await skeleton.sample(WARM_UP_TURNS);
    return skeleton;
  }

  /** `count` turns, one after another, in ms each. */
  async sample(count: number): Promise<number[]> {
    const samples: number[] = [];
    for (let n = 0; n < count; n++) {
      const started = performance.now();
      const sent = await fetch(`${this.url}/turns`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ text: `skeleton ${n}: make a folder and search` }),
      });
      const { turn_id: turnId } = (await sent.json()) as { turn_id: string };
      const events = await (await fetch(`${this.url}/turns/${turnId}/events`)).text();
      if (!events.includes('"type":"done"')) throw new Error(`skeleton turn ${turnId} ended without done`);
      samples.push(performance.now() - started);
    }
    return samples;
  }

  async close(): Promise<void> {
    await Promise.all(
      this.processes.map((child) => {
        if (child.exitCode !== null) return Promise.resolve();
        const exited = new Promise((resolve) => child.once('exit', resolve));
        child.kill('SIGTERM');
        return exited;
      }),
    );
    await this.model.stop();
    await this.drop();
  }
}
