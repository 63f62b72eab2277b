import { randomUUID } from 'node:crypto';
import { UnrecoverableError, Worker } from 'bullmq';
import { insertTestUser } from '../../../../tests/helpers/db';
import { publishing } from '../../../../tests/helpers/publishing';
import type { Logger } from '../logger';
import type { QueueName } from '../jobs';
import { stuckTurnSweep } from './stuck-turn-sweeper';

const { db, queues, outbox, prefix, redis, close } = publishing('stuck-turns');
afterAll(close);

const runtime = { db, queues, outbox, logger: { warn: () => undefined } as unknown as Logger };
const sweep = () => stuckTurnSweep(runtime, { modelTimeoutMs: 0, toolTimeoutMs: 0 });

async function turn(status: string, claim: string | null = null, sessionId?: string): Promise<{ id: string; sessionId: string }> {
  const session = sessionId ?? (await insertTestUser(db)).sessionId;
  const found = await db.query<{ id: string }>(
    `INSERT INTO turns (user_id, session_id, session_key, input, status, claim)
     SELECT user_id, id, session_key, 'hi', $2, $3 FROM sessions WHERE id = $1 RETURNING id`,
    [session, status, claim],
  );
  return { id: found.rows[0]?.id as string, sessionId: session };
}

async function runningTask(turnId: string): Promise<string> {
  const found = await db.query<{ id: string }>(
    `INSERT INTO tasks (turn_id, ref, position, iteration, call_id, tool_name, arguments, description, mutates, status)
     VALUES ($1, 'task_1', 1, 1, 'call_1', 'list_folders', '{}', 'List folders', false, 'in_progress') RETURNING id`,
    [turnId],
  );
  return found.rows[0]?.id as string;
}

/** A pending approval of the turn's task, past its expiry. */
async function expiredApproval(turnId: string): Promise<string> {
  const taskId = await runningTask(turnId);
  await db.query(`UPDATE tasks SET status = 'awaiting_approval' WHERE id = $1`, [taskId]);
  const found = await db.query<{ id: string }>(
    `INSERT INTO approvals (user_id, turn_id, task_id, expires_at)
     SELECT user_id, id, $2, NOW() - interval '1 minute' FROM turns WHERE id = $1 RETURNING id`,
    [turnId, taskId],
  );
  return found.rows[0]?.id as string;
}

const job = async (queue: QueueName, id: string) => (await queues[queue].getJob(id)) ?? undefined;

describe('stuck turn sweeper', () => {
  it('queues again the job each turn that has not moved for a whole pass waits for, under its own id', async () => {
    const queued = await turn('queued');
    const claimed = await turn('running', 'o.lost-model-step');
    const tooling = await turn('running');
    const taskId = await runningTask(tooling.id);
    const between = await turn('running');
    const approving = await turn('awaiting_approval');
    const approvalId = await expiredApproval(approving.id);
    const pass = sweep();
    await pass();
    expect(await job('agent-turns', `stuck.${queued.id}.0`)).toBeUndefined();

    await pass();
    expect((await job('agent-turns', `stuck.${queued.id}.0`))?.data).toEqual({ sessionId: queued.sessionId });
    expect((await job('agent-turns', 'o.lost-model-step'))?.data).toEqual({ turnId: claimed.id });
    expect((await job('tool-calls', `task.${taskId}`))?.data).toEqual({ taskId, turnId: tooling.id });
    expect((await job('agent-turns', `stuck.${between.id}.0`))?.data).toEqual({ turnId: between.id });
    expect((await job('agent-turns', `expire.${approvalId}`))?.data).toEqual({ approvalId });
  });

  it('leaves a turn that moved between passes, and one queued behind another but for its voice note', async () => {
    const moving = await turn('running');
    const ahead = await turn('awaiting_user');
    const behind = await turn('queued', null, ahead.sessionId);
    const voiceNote = randomUUID();
    await db.query(`UPDATE turns SET voice_pending = $2::jsonb, voice_held_until = NOW() + interval '1 hour' WHERE id = $1`, [
      behind.id,
      JSON.stringify([{ input: 0, message: voiceNote }]),
    ]);
    const pass = sweep();
    await pass();
    await db.query('UPDATE turns SET version = version + 1 WHERE id = $1', [moving.id]);
    await pass();
    expect(await job('agent-turns', `stuck.${moving.id}.0`)).toBeUndefined();
    expect(await job('agent-turns', `stuck.${moving.id}.1`)).toBeUndefined();
    expect(await job('agent-turns', `stuck.${behind.id}.0`)).toBeUndefined();
    expect((await job('deliveries', `transcribe.${voiceNote}`))?.data).toEqual({ channelMessageId: voiceNote });
  });
  it('leaves the job of a tool started less than three of its timeouts ago: a process that lost its Redis may still run it', async () => {
    const tooling = await turn('running');
    const taskId = await runningTask(tooling.id);
    await db.query(`UPDATE tasks SET started_at = NOW() - interval '50 seconds' WHERE id = $1`, [taskId]);
    const pass = stuckTurnSweep(runtime, { modelTimeoutMs: 0, toolTimeoutMs: 20_000 });
    await pass();
    await pass();
    expect(await job('tool-calls', `task.${taskId}`)).toBeUndefined();
    expect(await job('agent-turns', `stuck.${tooling.id}.0`)).toBeUndefined();

    await db.query(`UPDATE tasks SET started_at = NOW() - interval '61 seconds' WHERE id = $1`, [taskId]);
    await pass();
    expect((await job('tool-calls', `task.${taskId}`))?.data).toEqual({ taskId, turnId: tooling.id });
  });
  it('leaves the job of a model call claimed less than its timeout ago: a worker that lost its Redis may still be making it', async () => {
    const claimed = await turn('running', 'o.parked-model-step');
    const pass = stuckTurnSweep(runtime, { modelTimeoutMs: 60_000, toolTimeoutMs: 0 });
    await pass();
    await pass();
    expect(await job('agent-turns', 'o.parked-model-step')).toBeUndefined();
    expect(await job('agent-turns', `stuck.${claimed.id}.0`)).toBeUndefined();
  });

  it('reads each turn’s expired approvals through an index of the turn’s approvals, not through every approval kept', async () => {
    const indexes = await db.query<{ indexdef: string }>(`SELECT indexdef FROM pg_indexes WHERE tablename = 'approvals'`);
    expect(indexes.rows.map((row) => row.indexdef)).toContainEqual(expect.stringMatching(/\(turn_id\)$/));
  });
});

describe('stuck turn sweeper, a job failed for good', () => {
  /** Runs the job `id` (added by `add`) on a worker that fails every job at once, until it has failed. */
  async function failJob(queue: QueueName, id: string, add: () => Promise<unknown>): Promise<void> {
    const workerRedis = redis.duplicate({ maxRetriesPerRequest: null });
    const worker = new Worker(
      queue,
      () => {
        throw new UnrecoverableError('job stalled more than allowable limit');
      },
      { connection: workerRedis, prefix },
    );
    const failed = new Promise((resolve) => worker.on('failed', (job) => job?.id === id && resolve(job)));
    await add();
    await failed;
    await worker.close();
    workerRedis.disconnect();
  }

  it('runs again, attempts reset, the failed transcription a queued turn still waits for', async () => {
    const queued = await turn('queued');
    const voiceNote = randomUUID();
    await db.query(`UPDATE turns SET voice_pending = $2::jsonb, voice_held_until = NOW() + interval '1 hour' WHERE id = $1`, [
      queued.id,
      JSON.stringify([{ input: 0, message: voiceNote }]),
    ]);
    const id = `transcribe.${voiceNote}`;
    await failJob('deliveries', id, () => queues.deliveries.add('transcribe', { channelMessageId: voiceNote }, { jobId: id }));

    const pass = sweep();
    await pass();
    await pass();
    expect(await queues.deliveries.getJobState(id)).toBe('waiting');
  });

  it('gives up a running turn whose model step job failed without running (stalled too often), as its last attempt would', async () => {
    const claimed = await turn('running', `o.${randomUUID()}`);
    const claim = (await db.query<{ claim: string }>('SELECT claim FROM turns WHERE id = $1', [claimed.id])).rows[0]?.claim as string;
    await failJob('agent-turns', claim, () => queues['agent-turns'].add('advance', { turnId: claimed.id }, { jobId: claim }));

    const pass = sweep();
    await pass();
    await pass();
    const ended = await db.query<{ status: string; error: string }>('SELECT status, error FROM turns WHERE id = $1', [claimed.id]);
    expect(ended.rows[0]).toEqual({ status: 'failed', error: 'The assistant could not finish this turn after several attempts.' });
  });
});
