import type { Config } from '@assistant/shared';
import type { ChatModel } from './chat-model';
import { OfflinePlanner } from './offline.planner';
import { OpenAIChatModel } from './openai.model';

export function createChatModel(config: Config): ChatModel {
  if (config.LLM_PROVIDER === 'offline') return new OfflinePlanner();
  return new OpenAIChatModel({
    apiKey: config.OPENAI_API_KEY,
    baseURL: config.OPENAI_BASE_URL,
    timeoutMs: config.MODEL_TIMEOUT_MS,
  });
}

export type { ChatModel } from './chat-model';
export { isModelError, isPermanentModelError, userMessageForModelError } from '@assistant/shared';
