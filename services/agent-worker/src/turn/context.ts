import {
  buildHistory,
  buildSystemPrompt,
  buildTurnContext,
  modelTools,
  pitfallLine,
  sessionKind,
  toolSummary,
  type McpToolEntry,
  type RelevantDocument,
  type StepInput,
  type StoredMessage,
} from '@assistant/shared';
import type { ChatMessage } from '../llm/chat-model';
import type { TurnRow } from '@assistant/shared';

/** How many of a session's latest messages are read to build the history window. */
export const HISTORY_ROWS = 500;
/**
 * How much text of its sessions' latest messages an agent worker keeps between their steps
 * (`SessionHistories`): a few megabytes hold the conversations of hundreds of sessions in flight.
 */
export const HISTORY_KEPT_CHARS = 8_000_000;
/**
 * Every tool is offered on every step, so every tool is "in play": the pitfalls are the user's
 * most recently seen gotchas about any tool, plus the general ones.
 */
export const PITFALLS_SHOWN = 10;
const TOOL_NAMES = modelTools.map((tool) => tool.name);

/** The tools whose pitfalls a step shows: every built-in one and those of the MCP catalogue offered. */
export function pitfallTools(mcpTools: readonly McpToolEntry[]): string[] {
  return [...TOOL_NAMES, ...mcpTools.map((tool) => tool.name)];
}

/**
 * The request the model gets for the next step of a turn, laid out so a provider can cache its
 * prefix (docs/memory.md#request-layout): the system prompt (what changes rarely), the history (each message rendered
 * as in every earlier request), then the turn's context right before the newest user message.
 */
export function buildModelMessages(
  turn: TurnRow,
  { user, history: stored, pitfalls }: StepInput,
  documents: RelevantDocument[] | null,
  historyTokenBudget: number,
  mcpTools: readonly McpToolEntry[] = [],
): ChatMessage[] {
  const system = buildSystemPrompt({
    assistant: user.assistant,
    profile: user.profile,
    sessionKind: sessionKind(turn.session_key),
    toolSummary: toolSummary(mcpTools),
  });
  const context = buildTurnContext({
    now: new Date(),
    timeZone: user.timeZone,
    pitfalls: pitfalls.map((pitfall) => pitfallLine(pitfall)),
    relevantDocuments: documents,
  });
  // A session's newest HISTORY_ROWS, or more (SessionHistories): then its first messages are not read.
  const history = buildHistory(stored, historyTokenBudget, { cutShort: stored.length >= HISTORY_ROWS });
  const messages = history.messages.map(toChatMessage);
  // Before the newest user message, so the tool calls and results of this turn's earlier steps
  // follow it and repeat from step to step.
  const newest = messages.findLastIndex((message) => message.role === 'user');
  messages.splice(newest < 0 ? messages.length : newest, 0, { role: 'system', content: context });
  return [
    { role: 'system', content: system },
    // The summary changes as the window slides: outside the system prompt, it leaves that cacheable.
    ...(history.summary ? [{ role: 'system' as const, content: `## Earlier in this conversation\n${history.summary}` }] : []),
    ...messages,
  ];
}

function toChatMessage(message: StoredMessage): ChatMessage {
  return {
    role: message.role,
    content: message.content,
    ...(message.tool_calls && message.tool_calls.length > 0 ? { tool_calls: message.tool_calls } : {}),
    ...(message.tool_call_id ? { tool_call_id: message.tool_call_id } : {}),
  };
}
