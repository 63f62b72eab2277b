import type { Job, Processor } from 'bullmq';
import { loadConfigOrExit, runWorkerProcess, startOutboxSweeper, type Runtime } from '@assistant/shared';
import { createDigestProcessor } from './digest/digest.worker';
import { createErasureProcessor, startErasureSweeper } from './erasure/erasure.worker';
import { createChatModel } from './llm';
import { createReminderProcessor } from './reminders/reminder.worker';
import { createTurnProcessor } from './turn/turn.worker';

const model = createChatModel(loadConfigOrExit());

const runtime = runWorkerProcess(
  'agent-worker',
  (runtime) => ({
    'agent-turns': createTurnProcessor(runtime, model),
    reminders: createReminderProcessor(runtime),
    'session-digests': sessionDigestsProcessor(runtime),
  }),
  { model: model.name },
);
startOutboxSweeper(runtime, runtime.config.OUTBOX_SWEEP_MS);
startErasureSweeper(runtime);

/** The session-digests queue carries digests and, as background work on one user's data, erasures. */
function sessionDigestsProcessor(runtime: Runtime): Processor {
  const digest = createDigestProcessor(runtime, model);
  const erase = createErasureProcessor(runtime);
  return (job: Job, token?: string) => (job.name === 'erase-user' ? erase(job) : digest(job, token));
}
