import { jobId } from '../queues';
import type { Runtime } from '../runtime';
import { everyInterval, singlePass } from '../sweeps';
import { failTurn, TURN_GAVE_UP } from './finishing';
import { DUE_AT_SQL } from './lane-admission';
import { runToolJob } from './dispatch';
import { addOutboxJob, outboxJob, type OutboxJob } from './outbox';
import { NOT_FINISHED_SQL } from './turn-status';

/** Unfinished turns read per query; a pass reads them all, page by page. */
const PAGE = 1_000;

/**
 * A tool's job runs for at most this many of its timeouts: an MCP tool waits up to one for its
 * server's connection, then makes two attempts of one each (a built-in tool only the attempts).
 */
export const TOOL_RUN_TIMEOUTS = 3;

/**
 * Every unfinished turn, with what names the jobs it waits for: whether it heads its session's
 * lane (a turn behind another waits for that one), the model call's claim (the id of the job that
 * owns it), the jobs of its running tools (`task.<id>`, the task's own or the one that handed on
 * to it), its approvals past their expiry, its voice notes still waiting for a transcript, and
 * whether a queued one is due. Through idx_turns_lane, as the outbox sweeper.
 */
const UNFINISHED = `SELECT t.id, t.lane_seq, t.session_id, t.status, t.version, t.claim, t.voice_pending,
    NOT EXISTS (SELECT 1 FROM turns o WHERE o.session_id = t.session_id AND o.${NOT_FINISHED_SQL} AND o.lane_seq < t.lane_seq) AS head,
    COALESCE(${DUE_AT_SQL} <= NOW(), true) AS due,
    ARRAY(SELECT COALESCE(k.run_by, k.id)::text || ':' || k.id FROM tasks k WHERE k.turn_id = t.id AND k.status = 'in_progress' ORDER BY k.id) AS tools,
    ARRAY(SELECT COALESCE(k.run_by, k.id)::text FROM tasks k WHERE k.turn_id = t.id AND k.status = 'in_progress'
      AND k.started_at > NOW() - make_interval(secs => $2::float8 / 1000)) AS running_tools,
    ARRAY(SELECT a.id::text FROM approvals a WHERE a.turn_id = t.id AND a.status = 'pending' AND a.expires_at < NOW() ORDER BY a.id) AS expired
  FROM turns t
  WHERE t.${NOT_FINISHED_SQL} AND t.lane_seq > $1
  ORDER BY t.lane_seq LIMIT ${PAGE}`;

interface UnfinishedTurn {
  id: string;
  /** A bigint, as pg returns it: a string. */
  lane_seq: string;
  session_id: string;
  status: string;
  version: number;
  claim: string | null;
  voice_pending: { message: string }[];
  head: boolean;
  due: boolean;
  /** `<job task id>:<task id>` of each running tool. */
  tools: string[];
  /** The job task ids of the running tools started too recently to have ended in any process. */
  running_tools: string[];
  expired: string[];
}

type SweepRuntime = Pick<Runtime, 'db' | 'queues' | 'outbox' | 'logger'>;

/**
 * The safety net under the queues: a turn's jobs live only in Redis, so a Redis that comes back
 * empty (restarted without persistence, failed over, its keys flushed) leaves every unfinished
 * turn without the job that would advance it, and the session's later turns behind it. Each
 * interval this reads what every unfinished turn waits for and, for a turn that has not moved
 * since the last pass, queues that job again under its deterministic id: BullMQ adds
 * nothing while the job is still there, so a turn that only waits (a long model call, a tool, a
 * busy queue) is left alone, and several agent workers sweeping at once add one job. What runs
 * again stays exactly once: a model call is owned by the claim's job id, a tool by its task's
 * record (the tool worker's `ToolRunner`), a lane or advance job decides from the stored state.
 * A turn must stay unchanged for a whole interval (a minute by default), so a job still running in
 * a process that lost its Redis has ended by then; a model call or a tool, which may take longer,
 * is given its own time (stuckTurnSweep).
 */
export function startStuckTurnSweeper(runtime: SweepRuntime, intervalMs: number, limits: CallLimits): () => void {
  return everyInterval(stuckTurnSweep(runtime, limits), intervalMs);
}

/** How long a model call (MODEL_TIMEOUT_MS) and a tool's attempt (TOOL_TIMEOUT_MS) may take. */
export interface CallLimits {
  modelTimeoutMs: number;
  toolTimeoutMs: number;
}

/**
 * One pass each time it is called (a pass still running makes it a no-op). A claimed model call's
 * job is queued again only once the turn has stayed unchanged for `modelTimeoutMs` too, and a
 * running tool's once the tool has run longer than its job can (TOOL_RUN_TIMEOUTS of
 * `toolTimeoutMs`): before that, a worker that lost the job with its Redis may still be making
 * the call (a parked model call goes on without its job), and a second run would make it twice.
 */
export function stuckTurnSweep(runtime: SweepRuntime, { modelTimeoutMs, toolTimeoutMs }: CallLimits): () => Promise<void> {
  /** Each unfinished turn's fingerprint at the last pass, and since when it has had it. */
  let seen = new Map<string, { fingerprint: string; since: number }>();
  return singlePass(runtime.logger, 'stuck turn sweep', async () => {
    const turns = await unfinishedTurns(runtime, TOOL_RUN_TIMEOUTS * toolTimeoutMs);
    const at = Date.now();
    const now = new Map(
      turns.map((turn) => {
        const [print, before] = [fingerprint(turn), seen.get(turn.id)];
        return [turn.id, { fingerprint: print, since: before?.fingerprint === print ? before.since : at }];
      }),
    );
    const stuck = turns.filter((turn) => {
      const [before, after] = [seen.get(turn.id), now.get(turn.id)];
      return before?.fingerprint === after?.fingerprint && (turn.claim === null || at - (before?.since ?? at) >= modelTimeoutMs);
    });
    seen = now;
    // One turn's trouble (Redis gone again) leaves the others to this pass and the next.
    const recovered = await Promise.allSettled(stuck.map((turn) => recover(runtime, turn)));
    const failed = recovered.find((outcome) => outcome.status === 'rejected');
    if (failed) runtime.logger.warn({ err: failed.reason }, 'stuck turn sweep failed');
  });
}

/**
 * Queues the jobs a stuck turn waits for. A running turn whose job failed for good instead (BullMQ
 * fails a job that stalled too often without running it: a model step or tool that kills its
 * worker every time) is given up, as its job's last attempt would have: adding it again would
 * change nothing, and would run the poison again if it did. Any other turn's failed job (a lane,
 * an expiry, a transcription whose last attempt could not record its outcome) runs again with its
 * attempts reset, as the reminder sweeper does.
 */
async function recover(runtime: SweepRuntime, turn: UnfinishedTurn): Promise<void> {
  const { queues, db, outbox, logger } = runtime;
  const jobs = jobsNeeded(turn);
  const states = await Promise.all(jobs.map((job) => queues[job.queue].getJobState(job.jobId)));
  if (turn.status === 'running' && states.includes('failed')) {
    logger.warn({ turnId: turn.id }, 'giving up a turn whose job failed for good');
    if (await failTurn(db, turn.id, 'turn_failed', TURN_GAVE_UP)) await outbox.flush(turn.id);
    return;
  }
  await Promise.all(
    jobs.map(async (job, i) => {
      if (states[i] !== 'failed') return addOutboxJob(queues, job);
      logger.warn({ turnId: turn.id, jobId: job.jobId }, 'running again a failed job a turn waits for');
      await (await queues[job.queue].getJob(job.jobId))?.retry('failed', { resetAttemptsMade: true, resetAttemptsStarted: true });
    }),
  );
}

async function unfinishedTurns({ db }: SweepRuntime, toolRunMs: number): Promise<UnfinishedTurn[]> {
  const turns: UnfinishedTurn[] = [];
  for (let after = '0'; ;) {
    const page = await db.query<UnfinishedTurn>(UNFINISHED, [after, toolRunMs]);
    turns.push(...page.rows);
    if (page.rows.length < PAGE) return turns;
    after = page.rows.at(-1)?.lane_seq as string;
  }
}

/** What changes whenever a turn moves: a transition (version), a claim, a tool starting or ending. */
function fingerprint(turn: UnfinishedTurn): string {
  return [turn.status, turn.version, turn.claim, turn.head, turn.due, ...turn.tools, ...turn.expired].join('|');
}

/** The jobs a turn that has not moved waits for, under the ids they were queued with (or one per version). */
function jobsNeeded(turn: UnfinishedTurn): OutboxJob[] {
  const { id: turnId, session_id: sessionId } = turn;
  switch (turn.status) {
    case 'queued': {
      // A voice note's transcription runs while its turn waits, behind others or not (its job drops a settled one).
      const transcriptions = turn.voice_pending.map(({ message }) =>
        outboxJob('deliveries', 'transcribe', { channelMessageId: message }, { jobId: jobId('transcribe', message) }),
      );
      if (!turn.head || !turn.due) return transcriptions;
      return [...transcriptions, outboxJob('agent-turns', 'lane', { sessionId }, { jobId: jobId('stuck', `${turnId}.${turn.version}`) })];
    }
    case 'running':
      if (turn.claim !== null) return [outboxJob('agent-turns', 'advance', { turnId }, { jobId: turn.claim })];
      if (turn.tools.length > 0) {
        const jobTasks = new Set(turn.tools.map((tool) => tool.split(':')[0] as string));
        const ended = [...jobTasks].filter((taskId) => !turn.running_tools.includes(taskId));
        return ended.map((taskId) => runToolJob(turnId, taskId));
      }
      return [outboxJob('agent-turns', 'advance', { turnId }, { jobId: jobId('stuck', `${turnId}.${turn.version}`) })];
    case 'awaiting_approval':
      return turn.expired.map((approvalId) =>
        outboxJob('agent-turns', 'expire-approval', { approvalId }, { jobId: jobId('expire', approvalId) }),
      );
    default:
      // awaiting_user: the user's answer moves it, and nothing in Redis waits for it.
      return [];
  }
}
