import { randomUUID } from 'node:crypto';
import pg from 'pg';
import {
  RefRegistry,
  ToolInputError,
  toolCatalog,
  UUID_PATTERN,
  type ToolArgs,
  type ToolName,
  type OutboxEntry,
  type ToolResult,
} from '@assistant/shared';
import type { ToolContext, ToolHandler, ToolHandlers } from './handler';

/** A user with one chat session: each test makes its own so tests cannot see each other's rows. */
export interface TestUser {
  userId: string;
  sessionId: string;
}

/**
 * Runs handlers against the per-run test database (DATABASE_URL, set by jest's globalSetup)
 * the way the tool worker does: arguments parsed by the tool's schema, one transaction per call,
 * a ToolInputError rolled back and answered as a `success: false` result.
 */
export class ToolHarness<K extends ToolName> {
  readonly pool: pg.Pool;

  constructor(private readonly handlers: Pick<ToolHandlers, K>) {
    const url = process.env.DATABASE_URL;
    if (!url) throw new Error('DATABASE_URL is not set: run the tests through jest (globalSetup creates it)');
    this.pool = new pg.Pool({ connectionString: url, max: 4 });
  }

  async newUser(displayName = 'Test user'): Promise<TestUser> {
    const user = await this.pool.query<{ id: string }>('INSERT INTO users (display_name) VALUES ($1) RETURNING id', [
      displayName,
    ]);
    const userId = (user.rows[0] as { id: string }).id;
    const session = await this.pool.query<{ id: string }>(
      "INSERT INTO sessions (user_id, session_key) VALUES ($1, 'agent:main:main') RETURNING id",
      [userId],
    );
    return { userId, sessionId: (session.rows[0] as { id: string }).id };
  }

  /** Calls one tool with raw (unparsed) arguments; pass entityId to replay a retried call. */
  async run<N extends K>(name: N, rawArgs: unknown, user: TestUser, entityId: string = randomUUID()): Promise<ToolResult> {
    const args = toolCatalog[name].input.parse(rawArgs) as ToolArgs<N>;
    const handler = this.handlers[name] as ToolHandler<N>;
    const client = await this.pool.connect();
    try {
      await client.query('BEGIN');
      const ctx: ToolContext = {
        db: client,
        userId: user.userId,
        sessionId: user.sessionId,
        refs: new RefRegistry(this.pool, user.sessionId, user.userId),
        entityId,
        signal: new AbortController().signal,
        afterCommit: (entry) => this.scheduled.push(entry),
      };
      try {
        const result = await handler(args, ctx);
        await client.query('COMMIT');
        return result;
      } catch (error) {
        await client.query('ROLLBACK');
        if (error instanceof ToolInputError) return error.toResult();
        throw error;
      }
    } finally {
      client.release();
    }
  }

  /** What handlers asked to enqueue after commit, in order. */
  readonly scheduled: OutboxEntry[] = [];

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** True when the JSON of a result (or anything) contains a UUID anywhere. */
export function containsUuidAnywhere(value: unknown): boolean {
  return UUID_PATTERN.test(JSON.stringify(value));
}
