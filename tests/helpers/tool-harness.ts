import { randomUUID } from 'node:crypto';
import { createDb, parseConfig, UUID_PATTERN, type Db, type OutboxEntry, type ToolName, type ToolResult } from '@assistant/shared';
import { BuiltinTools } from '../../services/tool-worker/src/builtin-tools';
import type { ToolHandlers } from '../../services/tool-worker/src/handlers';
import { givenUp, runAttempts } from '../../services/tool-worker/src/tool-plan';
import type { TestUser } from './db';

/**
 * Runs handlers against the per-run test database (DATABASE_URL, set by jest's globalSetup)
 * through the tool worker's own BuiltinTools and retry loop: arguments parsed by the tool's
 * schema, one transaction per attempt under the tool's timeout and statement_timeout, a
 * ToolInputError rolled back and answered, a failed attempt retried. Only the task rows and
 * events a turn would get are left out.
 */
export class ToolHarness<K extends ToolName> {
  readonly pool: Db;
  private readonly tools: BuiltinTools;

  /** What handlers asked to enqueue after a commit, in order. */
  readonly scheduled: OutboxEntry[] = [];

  constructor(handlers: Pick<ToolHandlers, K>) {
    if (!process.env.DATABASE_URL) throw new Error('DATABASE_URL is not set: run the tests through jest (globalSetup creates it)');
    const config = parseConfig();
    this.pool = createDb(config.DATABASE_URL, { max: config.DATABASE_POOL_SIZE, application: 'tool-harness' });
    this.tools = new BuiltinTools(this.pool, config.TOOL_TIMEOUT_MS, handlers);
  }

  /** Calls one tool with raw (unparsed) arguments; pass entityId to replay a retried call. */
  async run<N extends K>(name: N, rawArgs: unknown, user: TestUser, entityId: string = randomUUID()): Promise<ToolResult> {
    let answer: ToolResult | undefined;
    const call = { toolName: name, arguments: rawArgs as Record<string, unknown> | null, ...user, entityId };
    const plan = this.tools.plan(call, {
      record: async (_client, result, afterCommit) => {
        answer = result;
        return afterCommit;
      },
      committed: async (owed) => {
        this.scheduled.push(...owed);
      },
      invalid: async (result) => {
        answer = result;
      },
    });
    if ('refusal' in plan) return plan.refusal.result;
    const problem = await runAttempts(plan);
    if (problem !== undefined || !answer) return givenUp(name, problem?.problem ?? 'no result', plan.maxAttempts);
    return answer;
  }

  async close(): Promise<void> {
    await this.pool.end();
  }
}

/** True when the JSON of a result (or anything) contains a UUID anywhere. */
export function containsUuidAnywhere(value: unknown): boolean {
  return UUID_PATTERN.test(JSON.stringify(value));
}
