import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '@assistant/shared';

/**
 * A model call that has not answered after this long leaves its job slot. Local and cached
 * answers come back sooner and keep the slot (parking costs a few Redis round trips); real models
 * take from hundreds of milliseconds to many seconds.
 */
export const INLINE_WAIT_MS = 25;

/**
 * When every slot of the worker is taken, a call leaves its slot after this long instead: a job
 * may be waiting for it. With one slot (`WORKER_CONCURRENCY=1`), 100 users and a model of 1 s,
 * waiting 25 ms held each step in its slot long enough to cap the worker at about 35 steps a
 * second: 31 % of the ideal turns/s against 65–69 % with 5 ms.
 */
export const BUSY_INLINE_WAIT_MS = 5;

/**
 * Model calls that hold no job slot (docs/agent.md#capacity).
 *
 * The step job starts the call; when it does not answer within INLINE_WAIT_MS the job moves
 * itself to `delayed` (freeing its slot) while the call goes on in this process, and the delay
 * is pushed out every third of a lease for as long as the call runs. When the call settles (its
 * result already committed by the step, guarded by the turn's claim), the job is promoted and
 * carries on from the stored state. If this process dies, the delayed job falls due after one
 * lease, and since the claim is the job's id its next run makes the call again: the same
 * recovery a killed active job gets from BullMQ's stalled-job check.
 */
export class ModelCallParking {
  /** Errors of parked calls, thrown by their job's next run so retries and backoff stay the queue's. */
  private readonly failures = new Map<string, unknown>();
  /** The parked calls still running, each until its job is promoted or removed. */
  private readonly parked = new Set<Promise<void>>();

  constructor(
    private readonly leaseMs: number,
    private readonly logger: Logger,
    /** True when every job slot of the worker is taken. */
    private readonly slotsFull: () => boolean,
  ) {}

  /**
   * `call` is a model step, true when it leaves the job nothing more to do. Resolves with its
   * value when it settled within INLINE_WAIT_MS, or BUSY_INLINE_WAIT_MS when the worker's slots
   * are all taken (rejecting with its error); otherwise parks the job and throws DelayedError,
   * which tells BullMQ the job is not finished.
   */
  async run(job: Job, token: string | undefined, call: Promise<boolean>): Promise<boolean> {
    let timer: NodeJS.Timeout | undefined;
    const late = new Promise<'late'>((resolve) => {
      timer = setTimeout(() => resolve('late'), this.slotsFull() ? BUSY_INLINE_WAIT_MS : INLINE_WAIT_MS);
    });
    try {
      const first = await Promise.race([call.then((value) => ({ value })), late]);
      if (first !== 'late') return first.value;
    } finally {
      clearTimeout(timer);
    }
    if (!token || !job.id) return call;
    await job.moveToDelayed(Date.now() + this.leaseMs, token);
    this.watch(job, call);
    throw new DelayedError();
  }

  /**
   * Settles once every call parked so far has: a worker that stops lets them finish (within its
   * shutdown deadline) and hands their jobs on, rather than leaving them to fall due after a
   * lease and call the model a second time.
   */
  async settled(): Promise<void> {
    await Promise.all(this.parked);
  }

  /** The error of this job's parked call, if it failed; taken once. */
  takeFailure(jobId: string | undefined): unknown {
    if (!jobId || !this.failures.has(jobId)) return undefined;
    const failure = this.failures.get(jobId);
    this.failures.delete(jobId);
    return failure ?? new Error('the model call failed');
  }

  /**
   * When the parked call settles, its job is promoted to carry on, or removed when the step left
   * it nothing to do (the step committed and published what comes next): promoting it would only
   * read the turn to decide "wait".
   */
  private watch(job: Job, call: Promise<boolean>): void {
    const id = job.id as string;
    const renew = setInterval(
      () => {
        // Not delayed any more (promoted, or fell due after a stall): nothing to renew.
        job.changeDelay(this.leaseMs).catch(() => undefined);
      },
      Math.max(500, Math.floor(this.leaseMs / 3)),
    );
    const settling = call
      .catch((error: unknown) => {
        this.failures.set(id, error);
        // Another worker may take the job's next run (and call the model again): forget it then.
        setTimeout(() => this.failures.delete(id), this.leaseMs * 2).unref();
        return false;
      })
      .then(async (done) => {
        clearInterval(renew);
        if (done) await job.remove().catch(() => job.promote());
        else await job.promote();
      })
      .catch((error: unknown) => {
        // Already running again (it fell due): that run reads the stored outcome itself.
        this.logger.debug({ err: error, jobId: id }, 'parked job not promoted');
      })
      .finally(() => this.parked.delete(settling));
    this.parked.add(settling);
  }
}
