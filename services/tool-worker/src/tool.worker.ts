import { jobProcessor, type JobProcessor, type Runtime } from '@assistant/shared';
import type { McpHub } from './mcp/mcp-hub';
import { McpToolCaller } from './mcp/mcp-tool-caller';
import { ToolRunner } from './run-tool';

/** The tool-calls processor. Infrastructure errors are retried by the queue; the last attempt fails the task. */
export function createToolProcessor(runtime: Runtime, mcp: McpHub): JobProcessor<'tool-calls'> {
  const runner = new ToolRunner(runtime, new McpToolCaller(runtime, mcp));
  return jobProcessor('tool-calls', {
    'run-tool': async ({ taskId, published }, job) => {
      try {
        await runner.run(taskId, published);
      } catch (error) {
        if (job.attemptsMade + 1 < (job.opts.attempts ?? 1)) throw error;
        runtime.logger.error({ err: error, taskId }, 'tool job out of attempts');
        const task = await runner.load(taskId);
        if (task?.status === 'in_progress') await runner.giveUp(task, 'the tool worker could not run it');
      }
    },
  });
}
