import { jobId } from '../queues';
import { outboxJob, type OutboxJob } from '../turns/outbox';

/**
 * The delayed digest of a session, armed by its messages: all share the session's deduplication
 * id, so while one waits the others are dropped (no job to replace, no worker woken per message).
 * The waiting one, due `idleSeconds` after the message that armed it, finds the session still in
 * use if more came since and moves itself to when the session could be idle (digest.worker.ts):
 * the digest runs once the session has been quiet for `idleSeconds`. The job id names the turn,
 * so republishing is harmless.
 */
export function sessionIdleDigestJob(sessionId: string, turnId: string, idleSeconds: number): OutboxJob {
  return outboxJob(
    'session-digests',
    'digest',
    { sessionId, reason: 'idle' },
    {
      jobId: jobId('digest-idle', turnId),
      delayMs: idleSeconds * 1_000,
      deduplicationId: jobId('digest', sessionId),
    },
  );
}
