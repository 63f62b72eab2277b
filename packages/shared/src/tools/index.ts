import { z } from 'zod';
import { sliceText } from '../text';
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

/** A tool's line in the summary shows at most this much of its description (its definition has all of it). */
const SUMMARY_LINE_CAP = 300;
/**
 * The summary's most characters. MCP servers bring any number of tools with descriptions of any
 * length: past this the rest are only counted (their definitions still list them), so the
 * profile, USER and MEMORY keep their room in the 60,000-character prompt.
 */
export const TOOL_SUMMARY_CAP = 12_000;

/** `text` in at most `cap` characters: cut at a word, with `...` (one-byte, as the whole prompt is), when it is longer. */
export function shortened(text: string, cap: number): string {
  if (text.length <= cap) return text;
  const cut = sliceText(text, 0, cap - 3);
  const word = cut.lastIndexOf(' ');
  return `${(word > cap / 2 ? cut.slice(0, word) : cut).trimEnd()}...`;
}

/**
 * `- create_folder: Create a folder …` lines for the system prompt's ## Tools section (MCP tools
 * after the built-in ones): each the first line of its description, and the whole within
 * TOOL_SUMMARY_CAP.
 */
export function toolSummary(extra: readonly ModelTool[] = []): string {
  const lines = [...modelTools, ...extra].map((tool) => {
    const first = tool.description.split('\n').find((line) => line.trim() !== '') ?? '';
    return `- ${tool.name}: ${shortened(first.trim(), SUMMARY_LINE_CAP)}`;
  });
  const shown: string[] = [];
  let size = 0;
  for (const line of lines) {
    size += line.length + 1;
    if (size > TOOL_SUMMARY_CAP) break;
    shown.push(line);
  }
  const hidden = lines.length - shown.length;
  return [...shown, ...(hidden > 0 ? [`- and ${hidden} more tools, described in their definitions`] : [])].join('\n');
}

export * from './tool-spec';
export * from './tool-result';
export * from './tool-directory';
