import type { SharedMetrics } from '@assistant/shared';
import type { ChatModel, ChatRequest, ChatResponse } from './chat-model';

/** One model call, a turn's or a digest's, counted in /metrics: its outcome, duration and reported tokens. */
export async function measuredCall(deps: { model: ChatModel; metrics: SharedMetrics }, request: ChatRequest): Promise<ChatResponse> {
  const started = performance.now();
  try {
    const response = await deps.model.complete(request);
    deps.metrics.inc('assistant_model_calls_total', { outcome: 'success' });
    if (response.usage) {
      deps.metrics.inc('assistant_model_tokens_total', { kind: 'prompt' }, response.usage.promptTokens);
      deps.metrics.inc('assistant_model_tokens_total', { kind: 'completion' }, response.usage.completionTokens);
      deps.metrics.inc('assistant_model_tokens_total', { kind: 'cached_prompt' }, response.usage.cachedPromptTokens ?? 0);
    }
    return response;
  } catch (error) {
    deps.metrics.inc('assistant_model_calls_total', { outcome: 'error' });
    throw error;
  } finally {
    deps.metrics.observe('assistant_model_call_duration_seconds', {}, (performance.now() - started) / 1000);
  }
}
