/**
 * Compile-time tests of the job catalogue, checked by `npm run typecheck` and never run. Each
 * `@ts-expect-error` must meet a compile error on the next line, or the directive itself fails
 * the typecheck: these lines prove that a job without a handler, an unknown job name and a wrong
 * payload do not compile.
 */
import { jobProcessor } from './job-processor';
import { addJob, type Queues } from './queues';
import { outboxJob } from './turns/outbox';

declare const queues: Queues;
declare const turnId: string;
const done = (): Promise<void> => Promise.resolve();
const useString = (value: string): Promise<void> => Promise.resolve(void value);

// A handler map with every job compiles, and each handler's data has its job's type.
jobProcessor('agent-turns', {
  lane: ({ sessionId }) => useString(sessionId),
  advance: ({ turnId }) => useString(turnId),
  'expire-approval': ({ approvalId }) => useString(approvalId),
});

// (a) A job without a handler.
// @ts-expect-error -- 'expire-approval' has no handler
jobProcessor('agent-turns', { lane: done, advance: done });

// @ts-expect-error -- the catalogue has no 'snooze' reminder job
jobProcessor('reminders', { fire: done, cancel: done, snooze: done });

// (b) An unknown job name.
// @ts-expect-error -- 'advanse' is not a job of agent-turns
outboxJob('agent-turns', 'advanse', { turnId });

// @ts-expect-error -- 'run-tool' is a job of another queue
void addJob(queues, 'agent-turns', 'run-tool', { taskId: turnId, turnId });

// (c) A wrong payload.
// @ts-expect-error -- the field is turnId, a string
outboxJob('agent-turns', 'advance', { turnID: 42 });

// @ts-expect-error -- a reply needs its text
void addJob(queues, 'deliveries', 'reply', { to: { channel: 'telegram', chat_id: '1' } });

jobProcessor('tool-calls', {
  // @ts-expect-error -- run-tool data has taskId and turnId, not sessionId
  'run-tool': ({ sessionId }) => useString(sessionId),
});
