import { runWorkerProcess } from '@assistant/shared';
import { createToolProcessor } from './tool.worker';

runWorkerProcess('tool-worker', (runtime) => ({ 'tool-calls': createToolProcessor(runtime) }));
