import { pitfallLine, pitfallsJson, type Pitfall, type Runtime } from '@assistant/shared';
import { insertTestUser } from '../../../tests/helpers/db';
import { publishing } from '../../../tests/helpers/publishing';
import type { McpToolCaller } from './mcp/mcp-tool-caller';
import { ToolRunner } from './run-tool';
import type { Attempt, Refusal, ToolPlan } from './tool-plan';

/** What a task that failed for good counts toward its tool's gotchas (docs/memory.md#gotchas). */
const { db, events, outbox, close } = publishing('run-tool-gotchas');
const runtime = { db, events, outbox, config: { TOOL_TIMEOUT_MS: 10_000 }, logger: { warn: () => undefined } } as unknown as Runtime;
afterAll(close);

const TOOL = 'notes__create_note';

/** A runner whose MCP tool plans as `plan` says. */
function runnerWith(plan: () => ToolPlan | Refusal): ToolRunner {
  return new ToolRunner(runtime, { owns: () => true, plan: async () => plan() } as unknown as McpToolCaller);
}

const attempts = (outcome: Attempt): ToolPlan => ({ maxAttempts: 1, timeoutMs: 10, attempt: async () => outcome });

/** Runs one started task of TOOL for the user, in a turn of its own. */
async function failOnce(runner: ToolRunner, userId: string, sessionId: string): Promise<void> {
  const turn = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, status, iterations, autonomous)
     VALUES ($1, $2, 'agent:main:main', 'note', 'running', 1, true) RETURNING id`,
    [userId, sessionId],
  );
  const task = await db.query<{ id: string }>(
    `INSERT INTO tasks (turn_id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status, started_at)
     VALUES ($1, 'task_1', 1, 1, 'call_1', $2, '{"title":"x"}', 'Note', true, 'in_progress', NOW()) RETURNING id`,
    [turn.rows[0]?.id, TOOL],
  );
  await runner.run(task.rows[0]?.id as string);
}

/** The user's Known pitfalls about TOOL after three such failures. */
async function pitfallsAfterThree(fail: (userId: string, sessionId: string) => Promise<void>): Promise<string[]> {
  const { userId, sessionId } = await insertTestUser(db);
  for (let n = 0; n < 3; n++) await fail(userId, sessionId);
  const found = await db.query<{ pitfalls: Pitfall[] }>(`SELECT ${pitfallsJson('$1', '$2', '10')} AS pitfalls`, [userId, [TOOL]]);
  return (found.rows[0]?.pitfalls ?? []).map((pitfall) => pitfallLine(pitfall));
}

const failing = (plan: () => ToolPlan | Refusal) => (userId: string, sessionId: string) => failOnce(runnerWith(plan), userId, sessionId);

describe('ToolRunner counting failures toward gotchas', () => {
  it('tells the model a tool that timed out three times timed out, not that its arguments were wrong', async () => {
    const [line, ...more] = await pitfallsAfterThree(failing(() => attempts({ kind: 'timeout' })));
    expect(more).toEqual([]);
    expect(line).toMatch(/^notes__create_note timed out 3 times \(.*timed out after 0.01 s\), not because of its arguments/);
    expect(line).not.toContain('Check the arguments');
  });

  it('tells the model a tool whose server was down three times could not reach it', async () => {
    const down = { kind: 'unavailable', message: 'The MCP server "notes" is not available right now (connect ECONNREFUSED).' } as const;
    const [line] = await pitfallsAfterThree(failing(() => attempts(down)));
    expect(line).toMatch(/^notes__create_note could not reach its server 3 times \(.*The MCP server "notes" is not available/);
    expect(line).not.toContain('Check the arguments');
  });

  it('still tells the model to check the arguments of a call the tool refused', async () => {
    const error = { success: false as const, error: 'Invalid arguments for notes__create_note: title: too short.', hint: 'Fix them.' };
    const [line] = await pitfallsAfterThree(failing(() => ({ refusal: { result: error, failure: 'invalid' } })));
    expect(line).toMatch(/^notes__create_note failed 3 times this way: .* Check the arguments before calling it again\.$/);
  });

  it('counts nothing for failures that say nothing of the tool: an outcome unknown after a crash, a job the worker could not run', async () => {
    const unknown = {
      success: false as const,
      error: 'The outcome of notes__create_note is unknown: the call may have reached the notes server.',
      hint: 'Tell the user.',
    };
    expect(await pitfallsAfterThree(failing(() => ({ refusal: { result: unknown, failure: 'unknown' } })))).toEqual([]);
    // The job's last attempt (tool.worker.ts): its runs threw, as they do while the database is unreachable.
    const couldNotRun = async (userId: string, sessionId: string) => {
      const runner = runnerWith(() => {
        throw new Error('connection refused');
      });
      await expect(failOnce(runner, userId, sessionId)).rejects.toThrow('connection refused');
      const task = await db.query<{ id: string }>(
        `SELECT k.id FROM tasks k JOIN turns t ON t.id = k.turn_id WHERE t.user_id = $1 AND k.status = 'in_progress'`,
        [userId],
      );
      const loaded = await runner.load(task.rows[0]?.id as string);
      if (loaded) await runner.giveUp(loaded, 'the tool worker could not run it');
    };
    expect(await pitfallsAfterThree(couldNotRun)).toEqual([]);
  });
});
