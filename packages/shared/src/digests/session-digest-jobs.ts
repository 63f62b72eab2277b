import { jobId } from '../queues';
import { outboxJob, type OutboxEntry } from '../turns/outbox';

/**
 * The delayed digest of a session, re-armed by each of its messages: all share the session's
 * debounce id, so a new one replaces the one still waiting and the digest runs once the session
 * has been quiet for `idleSeconds`. The job id names the turn, so republishing is harmless.
 */
export function sessionIdleDigestJob(sessionId: string, turnId: string, idleSeconds: number): OutboxEntry {
  return outboxJob(
    'session-digests',
    'digest',
    { sessionId, reason: 'idle' },
    {
      jobId: jobId('digest-idle', turnId),
      delayMs: idleSeconds * 1_000,
      debounceId: jobId('digest', sessionId),
    },
  );
}
