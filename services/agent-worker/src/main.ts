import { loadConfigOrExit, runWorkerProcess } from '@assistant/shared';
import { createChatModel } from './llm';
import { createTurnProcessor } from './turn/turn.worker';

const model = createChatModel(loadConfigOrExit());

runWorkerProcess('agent-worker', (runtime) => ({ 'agent-turns': createTurnProcessor(runtime, model) }), {
  model: model.name,
});
