import OpenAI from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { httpFetch } from '@assistant/shared';
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall } from './chat-model';

/** Any OpenAI-compatible Chat Completions endpoint, streamed. Retries are the job queue's business. */
export class OpenAIChatModel implements ChatModel {
  readonly name = 'openai';
  private readonly client: OpenAI;

  constructor(options: { apiKey?: string | undefined; baseURL?: string | undefined; timeoutMs: number }) {
    this.client = new OpenAI({
      // Local OpenAI-compatible servers often need no key, but the SDK insists on one.
      apiKey: options.apiKey ?? 'not-needed',
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      timeout: options.timeoutMs,
      maxRetries: 0,
      fetch: httpFetch,
    });
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    const stream = await this.client.chat.completions.create(
      {
        model: request.model,
        messages: request.messages.map(toOpenAI),
        stream: true,
        stream_options: { include_usage: true },
        ...(request.tools.length > 0
          ? {
              tools: request.tools.map((tool) => ({
                type: 'function' as const,
                function: { name: tool.name, description: tool.description, parameters: tool.parameters },
              })),
            }
          : {}),
      },
      request.signal ? { signal: request.signal } : {},
    );

    let content = '';
    const calls = new Map<number, ToolCall>();
    let usage: ChatResponse['usage'];
    for await (const chunk of stream) {
      const delta = chunk.choices[0]?.delta;
      if (delta?.content) {
        content += delta.content;
        await request.onToken(delta.content);
      }
      for (const part of delta?.tool_calls ?? []) {
        const index = toolCallIndex(part, calls);
        const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
        if (part.id) call.id = part.id;
        if (part.function?.name) call.name += part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        calls.set(index, call);
      }
      // With include_usage the last chunk carries the call's usage (and no choices).
      if (chunk.usage) {
        usage = {
          promptTokens: chunk.usage.prompt_tokens,
          completionTokens: chunk.usage.completion_tokens,
          cachedPromptTokens: chunk.usage.prompt_tokens_details?.cached_tokens ?? 0,
        };
      }
    }
    const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    return { content, toolCalls, ...(usage ? { usage } : {}) };
  }
}

/**
 * Which call a streamed fragment belongs to. OpenAI numbers them; some compatible servers leave
 * the index out, and then a fragment with a new id starts a new call and one without continues the last.
 */
function toolCallIndex(part: { index?: number; id?: string }, calls: Map<number, ToolCall>): number {
  if (typeof part.index === 'number') return part.index;
  const last = calls.size - 1;
  const current = calls.get(last);
  return part.id && (!current || (current.id !== '' && current.id !== part.id)) ? calls.size : Math.max(last, 0);
}

function toOpenAI(message: ChatMessage): ChatCompletionMessageParam {
  switch (message.role) {
    case 'system':
      return { role: 'system', content: message.content };
    case 'user':
      return message.images && message.images.length > 0
        ? {
            role: 'user',
            content: [
              { type: 'text', text: message.content },
              ...message.images.map((url) => ({ type: 'image_url' as const, image_url: { url } })),
            ],
          }
        : { role: 'user', content: message.content };
    case 'tool':
      return { role: 'tool', content: message.content, tool_call_id: message.tool_call_id ?? '' };
    case 'assistant':
      return message.tool_calls && message.tool_calls.length > 0
        ? {
            role: 'assistant',
            content: message.content === '' ? null : message.content,
            tool_calls: message.tool_calls.map((call) => ({
              id: call.id,
              type: 'function' as const,
              function: { name: call.name, arguments: call.arguments },
            })),
          }
        : { role: 'assistant', content: message.content };
  }
}
