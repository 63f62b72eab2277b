import type { ModelUsage } from '@assistant/shared';
import type { ChatModel, ChatRequest, ChatResponse } from './chat-model';

/**
 * The tokens a model call counts for (GET /v1/usage, DAILY_TOKEN_BUDGET): what the server
 * reported, else an estimate, since some OpenAI-compatible servers report no usage (they ignore
 * `stream_options`): about four characters a token. The offline planner is no model: it spends none.
 */
export function callUsage(model: ChatModel, request: ChatRequest, response: ChatResponse): ModelUsage | undefined {
  if (response.usage) return response.usage;
  if (model.name === 'offline') return undefined;
  const prompt = JSON.stringify(request.messages).length + JSON.stringify(request.tools).length;
  const completion = response.content.length + JSON.stringify(response.toolCalls).length;
  return { promptTokens: Math.ceil(prompt / 4), completionTokens: Math.ceil(completion / 4) };
}
