import { fork, type ChildProcess } from 'node:child_process';
import path from 'node:path';
import pg from 'pg';
import { Api } from '../api';
import { FakeModel } from '../fake-model';

/**
 * The floor of a turn alone in this design: what the contract makes every turn do, and nothing
 * else, in a gateway, an agent worker and a tool worker of its own (turn-skeleton-process.ts).
 * A client's POST is stored and queued; the first step calls the model (the openai SDK over
 * node:http, as the agent worker calls it, with a 64 KB history) and stores its tool calls; the tool worker stores two results; the second step calls
 * the model again and stores the answer; the client reads the events over SSE to `done`. Five
 * flushed commits, three BullMQ jobs, two model calls, the events on a Redis stream: no context,
 * no refs, no outbox, no validation. Its gateway answers the API's paths for a message and its
 * events, so `user` takes turns as a user of the system does. Kept open, like BareRoundTrip, to
 * be sampled next to the turns alone.
 */
export class TurnSkeleton {
  private constructor(
    /** Takes the skeleton's turns (bench-profile.ts: turnsAlone). */
    readonly user: Api,
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
    return new TurnSkeleton(new Api(`http://127.0.0.1:${ready[0]?.port}`, 'skeleton'), model, processes, drop);
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
