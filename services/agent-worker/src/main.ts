import { loadConfigOrExit, runWorkerProcess, startOutboxSweeper } from '@assistant/shared';
import { createDigestProcessor } from './digest/digest.worker';
import { createChatModel } from './llm';
import { createReminderProcessor } from './reminders/reminder.worker';
import { createTurnProcessor } from './turn/turn.worker';

const model = createChatModel(loadConfigOrExit());

const runtime = runWorkerProcess(
  'agent-worker',
  (runtime) => ({
    'agent-turns': createTurnProcessor(runtime, model),
    reminders: createReminderProcessor(runtime),
    'session-digests': createDigestProcessor(runtime, model),
  }),
  { model: model.name },
);
startOutboxSweeper(runtime, runtime.config.OUTBOX_SWEEP_MS);
