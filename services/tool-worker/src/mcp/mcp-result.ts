import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { fail, ok, type ToolResult } from '@assistant/shared';

/** What of a result reaches the model: about 4,000 tokens, so one tool cannot flood the context. */
export const MCP_RESULT_MAX_CHARS = 16_000;

/** The result's content as text: text parts as they are, other parts named with their size. */
export function resultText(result: CallToolResult): string {
  const parts = (result.content ?? []).map((part) => {
    switch (part.type) {
      case 'text':
        return part.text;
      case 'image':
      case 'audio':
        return `[${part.type} ${part.mimeType}, ${Math.round((part.data.length * 3) / 4)} bytes, not shown]`;
      case 'resource_link':
        return `[resource ${part.name}: ${part.uri}]`;
      case 'resource':
        return 'text' in part.resource ? part.resource.text : `[resource ${part.resource.uri}, binary, not shown]`;
      default:
        return '[content of an unknown type, not shown]';
    }
  });
  if (parts.length === 0 && result.structuredContent !== undefined) parts.push(JSON.stringify(result.structuredContent));
  return parts.join('\n');
}

/** At most `max` characters, with a visible note of what was cut. */
export function capText(text: string, max = MCP_RESULT_MAX_CHARS): string {
  if (text.length <= max) return text;
  const note = `\n[… ${text.length - max} more characters cut]`;
  return `${text.slice(0, max - note.length)}${note}`;
}

/**
 * Our result shape (docs/tools.md#results) around a server's answer. `isError` is the tool's own answer:
 * a failure the model reads and can act on, not one a retry would fix.
 */
export function toToolResult(server: string, tool: string, text: string, isError: boolean): ToolResult {
  return isError
    ? fail(text || `${tool} reported an error.`, `This came from the ${server} server's tool; fix the arguments or tell the user.`)
    : ok(text || `${tool} finished without output.`, { source: server });
}
