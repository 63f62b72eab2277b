// First, before the rest of the process loads: how far V8 lets the heap grow (see the module).
import '@assistant/shared/heap-growth';
import {
  jobProcessor,
  loadConfigOrExit,
  runWorkerProcess,
  startLostRedisSweeper,
  startOutboxSweeper,
  startStuckTurnSweeper,
} from '@assistant/shared';
import { createDigestHandler } from './digest/digest.worker';
import { createErasureHandler, startErasureSweeper } from './erasure/erasure.worker';
import { createChatModel } from './llm';
import { startReminderSweeper } from './reminders/reminder-sweeper';
import { createReminderProcessor } from './reminders/reminder.worker';
import { createTurnProcessor, type TurnProcessor } from './turn/turn.worker';

const model = createChatModel(loadConfigOrExit());
let turns: TurnProcessor | undefined;

const runtime = runWorkerProcess(
  'agent-worker',
  (runtime) => ({
    'agent-turns': (turns = createTurnProcessor(runtime, model)),
    reminders: createReminderProcessor(runtime),
    // Digests and, as background work on one user's data, erasures.
    'session-digests': jobProcessor('session-digests', {
      digest: createDigestHandler(runtime, model),
      'erase-user': createErasureHandler(runtime),
    }),
  }),
  { model: model.name },
  // Model calls that left their job slot are let finish too: their jobs then carry on elsewhere.
  async () => turns?.parking.settled(),
);
startOutboxSweeper(runtime, runtime.config.OUTBOX_SWEEP_MS);
startStuckTurnSweeper(runtime, runtime.config.STUCK_TURN_SWEEP_MS, {
  modelTimeoutMs: runtime.config.MODEL_TIMEOUT_MS,
  toolTimeoutMs: runtime.config.TOOL_TIMEOUT_MS,
});
startLostRedisSweeper(runtime, runtime.config.STUCK_TURN_SWEEP_MS);
startErasureSweeper(runtime);
startReminderSweeper(runtime);
