import { eventKeys, type Runtime } from '@assistant/shared';
import { insertTestUser } from '../../../tests/helpers/db';
import { publishing } from '../../../tests/helpers/publishing';
import type { McpToolCaller } from './mcp/mcp-tool-caller';
import { ToolRunner } from './run-tool';

/** What a finished tool hands on to: the step's next task, run in the same job, only while it is still the next one. */
const { db, redis, prefix, queues, events, outbox, close } = publishing('run-tool');
const runtime = { db, events, outbox, config: { TOOL_TIMEOUT_MS: 10_000 }, logger: { warn: () => undefined } } as unknown as Runtime;
const runner = new ToolRunner(runtime, { owns: () => false } as unknown as McpToolCaller);
afterAll(close);

/** A running turn whose step planned three searches: the first started, the others as given. */
async function step(second: string, third: string): Promise<{ turnId: string; tasks: string[] }> {
  const user = await insertTestUser(db);
  const turn = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, status, iterations, autonomous)
     VALUES ($1, $2, 'agent:main:main', 'search', 'running', 1, false) RETURNING id`,
    [user.userId, user.sessionId],
  );
  const turnId = turn.rows[0]?.id as string;
  const tasks: string[] = [];
  for (const [index, status] of ['in_progress', second, third].entries()) {
    const task = await db.query<{ id: string }>(
      `INSERT INTO tasks (turn_id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status, started_at)
       VALUES ($1, $2, $3, 1, $4, 'search_documents', '{"query":"plans"}', 'Search', false, $5, NOW()) RETURNING id`,
      [turnId, `task_${index + 1}`, index + 1, `call_${index + 1}`, status],
    );
    tasks.push(task.rows[0]?.id as string);
  }
  return { turnId, tasks };
}

const statuses = async (tasks: string[]) =>
  (await db.query<{ status: string }>('SELECT status FROM tasks WHERE id = ANY($1) ORDER BY position', [tasks])).rows.map(
    (row) => row.status,
  );

const queued = async (turnId: string) => ({
  advance: (await queues['agent-turns'].getJobs(['waiting'])).filter((job) => job.data.turnId === turnId).length,
  tools: (await queues['tool-calls'].getJobs(['waiting'])).filter((job) => job.data.turnId === turnId).map((job) => job.data.taskId),
});

describe('ToolRunner hand-off', () => {
  it("runs the step's next task in the same job, then queues the agent's advance", async () => {
    const { turnId, tasks } = await step('awaiting_approval', 'pending');
    await runner.run(tasks[0] as string);
    expect(await statuses(tasks)).toEqual(['completed', 'awaiting_approval', 'completed']);
    expect(await queued(turnId)).toEqual({ advance: 1, tools: [] });
    const runBy = await db.query<{ run_by: string | null }>('SELECT run_by FROM tasks WHERE id = $1', [tasks[2]]);
    expect(runBy.rows[0]?.run_by).toBe(tasks[0]);
  });

  it("runs a step's tools with one read, each removing the batch before it: the last batch is left to its advance", async () => {
    const { turnId, tasks } = await step('pending', 'pending');
    const load = jest.spyOn(runner, 'load');
    await runner.run(tasks[0] as string);
    expect(load).toHaveBeenCalledTimes(1);
    load.mockRestore();
    expect(await statuses(tasks)).toEqual(['completed', 'completed', 'completed']);
    const [advance] = (await queues['agent-turns'].getJobs(['waiting'])).filter((job) => job.data.turnId === turnId);
    const left = await db.query<{ keys: string[] }>(
      `SELECT ARRAY(SELECT e->>'key' FROM jsonb_array_elements(outbox) e) AS keys FROM turns WHERE id = $1`,
      [turnId],
    );
    expect(left.rows[0]?.keys).toEqual(advance?.data.published);
    expect(left.rows[0]?.keys).toHaveLength(3);
  });

  it('takes up the task handed on to it when the job runs again after a crash', async () => {
    const { turnId, tasks } = await step('pending', 'pending');
    // Killed right after the first tool committed its hand-off: the second is started, in this job.
    await db.query(`UPDATE tasks SET status = 'completed', finished_at = NOW() WHERE id = $1`, [tasks[0]]);
    await db.query(`UPDATE tasks SET status = 'in_progress', started_at = NOW(), run_by = $2 WHERE id = $1`, [tasks[1], tasks[0]]);
    await runner.run(tasks[0] as string);
    expect(await statuses(tasks)).toEqual(['completed', 'completed', 'completed']);
    expect(await queued(turnId)).toEqual({ advance: 1, tools: [] });
  });

  it('leaves it to the agent when another task came first while the tool ran', async () => {
    const { turnId, tasks } = await step('awaiting_approval', 'pending');
    const load = runner.load.bind(runner);
    // The user approves the second task after this one was loaded: it now runs before the third.
    jest.spyOn(runner, 'load').mockImplementationOnce(async (taskId) => {
      const task = await load(taskId);
      await db.query(`UPDATE tasks SET status = 'approved' WHERE id = $1`, [tasks[1]]);
      return task;
    });
    await runner.run(tasks[0] as string);
    expect(await statuses(tasks)).toEqual(['completed', 'approved', 'pending']);
    expect(await queued(turnId)).toEqual({ advance: 1, tools: [] });
  });

  it('announces the task it hands on to with the end of the one before, each task once', async () => {
    const { turnId, tasks } = await step('pending', 'pending');
    const emits = jest.spyOn(events, 'emitMany');
    await runner.run(tasks[0] as string);
    // The first task's start, then one append per task: its end and the next one's start.
    expect(emits).toHaveBeenCalledTimes(4);
    emits.mockRestore();
    const stream = await redis.xrange(eventKeys(prefix, turnId).stream, '-', '+');
    const sent = stream.map(([, fields]) => {
      const data = JSON.parse(fields[5] as string) as { task_id: string; status?: string };
      return `${fields[3]} ${data.task_id}${data.status ? ` ${data.status}` : ''}`;
    });
    expect(sent).toEqual([
      'task_update task_1 in_progress',
      'tool_start task_1',
      'tool_complete task_1',
      'task_update task_1 completed',
      'task_update task_2 in_progress',
      'tool_start task_2',
      'tool_complete task_2',
      'task_update task_2 completed',
      'task_update task_3 in_progress',
      'tool_start task_3',
      'tool_complete task_3',
      'task_update task_3 completed',
    ]);
  });
});
