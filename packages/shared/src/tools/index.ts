import { z } from 'zod';
import { documentTools } from './document.tools';
import { folderTools } from './folder.tools';
import { goalTools } from './goal.tools';
import { habitTools } from './habit.tools';
import { memoryTools } from './memory.tools';
import { reminderTools } from './reminder.tools';
import type { ToolSpec } from './tool-spec';

/** Every tool the model can call. The tool worker must provide a handler for each (checked by the compiler). */
export const toolCatalog = {
  ...folderTools,
  ...documentTools,
  ...habitTools,
  ...reminderTools,
  ...goalTools,
  ...memoryTools,
};

export type ToolCatalog = typeof toolCatalog;
export type ToolName = keyof ToolCatalog;
export type ToolArgs<N extends ToolName> = z.output<ToolCatalog[N]['input']>;

export function isToolName(name: string): name is ToolName {
  return Object.hasOwn(toolCatalog, name);
}

export function getTool(name: string): ToolSpec | undefined {
  return isToolName(name) ? toolCatalog[name] : undefined;
}

export interface ModelTool {
  name: string;
  description: string;
  parameters: Record<string, unknown>;
}

/**
 * The most function definitions one Chat Completions request may carry (OpenAI refuses more with
 * a 400, which would fail every turn): MCP tools past it are not offered (docs/tools.md#mcp-tools).
 */
export const MAX_MODEL_TOOLS = 128;

/** The catalog as function definitions for the model: JSON Schema generated from the zod schemas. */
export const modelTools: ModelTool[] = Object.entries(toolCatalog).map(([name, spec]) => {
  const { $schema: _ignored, ...parameters } = z.toJSONSchema(spec.input, { io: 'input' }) as Record<string, unknown>;
  return { name, description: spec.description, parameters };
});

/** `- create_folder: Create a folder …` lines for the system prompt's ## Tools section (MCP tools after the built-in ones). */
export function toolSummary(extra: readonly ModelTool[] = []): string {
  return [...modelTools, ...extra].map((tool) => `- ${tool.name}: ${tool.description}`).join('\n');
}

export * from './tool-spec';
export * from './tool-result';
export * from './tool-directory';
