import {
  buildHistory,
  buildSystemPrompt,
  gotchasForTools,
  loadProfile,
  modelTools,
  pitfallLine,
  sessionKind,
  toolSummary,
  type Queryable,
  type StoredMessage,
} from '@assistant/shared';
import type { ChatMessage } from '../llm/chat-model';
import { relevantDocuments } from './relevant-documents';
import type { TurnRow } from './turn-state';

/** How many of a session's latest messages are read to build the history window. */
const HISTORY_ROWS = 500;
/**
 * Every tool is offered on every step, so every tool is "in play": the pitfalls are the user's
 * most recently seen gotchas about any tool, plus the general ones.
 */
const PITFALLS_SHOWN = 10;
const TOOL_NAMES = modelTools.map((tool) => tool.name);

/** The system prompt and conversation the model gets for the next step of a turn. */
export async function buildModelMessages(db: Queryable, turn: TurnRow, historyTokenBudget: number): Promise<ChatMessage[]> {
  const [users, profile, rows, gotchas, documents] = await Promise.all([
    db.query<{ assistant_name: string; assistant_emoji: string | null; assistant_creature: string | null; assistant_tone: string | null; assistant_vibe: string | null }>(
      'SELECT assistant_name, assistant_emoji, assistant_creature, assistant_tone, assistant_vibe FROM users WHERE id = $1',
      [turn.user_id],
    ),
    loadProfile(db, turn.user_id),
    db.query<StoredMessage>(
      `SELECT role, content, tool_calls, tool_call_id FROM
         (SELECT id, role, content, tool_calls, tool_call_id FROM messages WHERE session_id = $1 ORDER BY id DESC LIMIT ${HISTORY_ROWS}) recent
       ORDER BY id`,
      [turn.session_id],
    ),
    gotchasForTools(db, turn.user_id, TOOL_NAMES, PITFALLS_SHOWN),
    relevantDocuments(db, turn),
  ]);
  const user = users.rows[0];

  const system = buildSystemPrompt({
    assistant: {
      name: user?.assistant_name ?? 'Nexo',
      emoji: user?.assistant_emoji,
      creature: user?.assistant_creature,
      tone: user?.assistant_tone,
      vibe: user?.assistant_vibe,
    },
    profile,
    sessionKind: sessionKind(turn.session_key),
    toolSummary: toolSummary(),
    pitfalls: gotchas.map((gotcha) => pitfallLine(gotcha)),
    relevantDocuments: documents,
    now: new Date(),
  });
  const history = buildHistory(rows.rows, historyTokenBudget);
  return [
    { role: 'system', content: history.summary ? `${system}\n\n## Earlier in this conversation\n${history.summary}` : system },
    ...history.messages.map(toChatMessage),
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
