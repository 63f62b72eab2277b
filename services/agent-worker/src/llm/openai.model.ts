import OpenAI, { APIConnectionTimeoutError, APIError } from 'openai';
import type { ChatCompletionMessageParam } from 'openai/resources/chat/completions';
import { httpFetch, type ModelUsage } from '@assistant/shared';
import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall } from './chat-model';

/** Any OpenAI-compatible Chat Completions endpoint, streamed. Retries are the job queue's business. */
export class OpenAIChatModel implements ChatModel {
  readonly name = 'openai';
  private readonly client: OpenAI;
  private readonly timeoutMs: number;

  constructor(options: { apiKey?: string | undefined; baseURL?: string | undefined; timeoutMs: number }) {
    this.timeoutMs = options.timeoutMs;
    this.client = new OpenAI({
      // Local OpenAI-compatible servers often need no key, but the SDK insists on one.
      apiKey: options.apiKey ?? 'not-needed',
      ...(options.baseURL ? { baseURL: options.baseURL } : {}),
      timeout: options.timeoutMs,
      maxRetries: 0,
      fetch: httpFetch,
      // The SDK would print an unreadable chunk to stderr, raw, beside our JSON logs; the error it
      // throws is reported through the agent's own logger instead (readable, below).
      logLevel: 'off',
    });
  }

  /**
   * The SDK's timeout ends once the answer's headers arrive, and it ends a stream whose request was
   * aborted as if it were complete: an endpoint that stops sending in mid-answer would hold the
   * call (and every later turn of its session) forever, or its cut answer would pass for a whole
   * one. MODEL_TIMEOUT_MS bounds the whole call here, and running out of it is a timeout error.
   */
  async complete(request: ChatRequest): Promise<ChatResponse> {
    const deadline = new AbortController();
    // Cleared when the call ends: thousands of calls a minute leave no timers behind.
    const timer = setTimeout(() => deadline.abort(), this.timeoutMs);
    const timedOut = () => new APIConnectionTimeoutError({ message: `The model call took longer than ${this.timeoutMs} ms.` });
    const signal = request.signal ? AbortSignal.any([request.signal, deadline.signal]) : deadline.signal;
    try {
      const response = await this.stream(request, signal);
      if (deadline.signal.aborted) throw timedOut();
      return response;
    } catch (error) {
      throw deadline.signal.aborted ? timedOut() : error;
    } finally {
      clearTimeout(timer);
    }
  }

  private async stream(request: ChatRequest, signal: AbortSignal): Promise<ChatResponse> {
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
      { signal },
    );

    let content = '';
    const calls = new Map<number, ToolCall>();
    let usage: ChatResponse['usage'];
    for await (const chunk of readable(stream)) {
      // The chunks are the endpoint's untrusted output (docs/agent.md#untrusted-model-output): a
      // field of another type than the API's is left out, never allowed to fail the turn.
      if (typeof chunk !== 'object' || chunk === null) continue;
      const delta = Array.isArray(chunk.choices) ? chunk.choices[0]?.delta : undefined;
      if (typeof delta?.content === 'string' && delta.content !== '') {
        content += delta.content;
        await request.onToken(delta.content);
      }
      for (const part of Array.isArray(delta?.tool_calls) ? delta.tool_calls : []) {
        if (typeof part !== 'object' || part === null) continue;
        const index = toolCallIndex(part, calls);
        const call = calls.get(index) ?? { id: '', name: '', arguments: '' };
        if (typeof part.id === 'string' && part.id !== '') call.id = part.id;
        // A name comes whole, as the SDK's own accumulator takes it: some servers (MiniMax on NVIDIA
        // NIM, Fireworks) send it again with every fragment, and appending it made `list_habitslist_habits`.
        if (typeof part.function?.name === 'string' && part.function.name !== '') call.name = part.function.name;
        if (part.function?.arguments) call.arguments += part.function.arguments;
        calls.set(index, call);
      }
      // With include_usage the last chunk carries the call's usage (and no choices).
      if (chunk.usage) usage = reportedUsage(chunk.usage);
    }
    const toolCalls = [...calls.entries()].sort(([a], [b]) => a - b).map(([, call]) => call);
    return { content, toolCalls, ...(usage ? { usage } : {}) };
  }
}

/**
 * The stream's chunks; one that is not JSON (the SDK throws a SyntaxError) is the endpoint
 * failing, like an error status: an APIError, retried and at last reported as `model_error`.
 */
async function* readable<T>(stream: AsyncIterable<T>): AsyncIterable<T> {
  try {
    yield* stream;
  } catch (error) {
    if (error instanceof SyntaxError)
      throw new APIError(undefined, undefined, `the model endpoint streamed a chunk that is not JSON (${error.message})`, undefined);
    throw error;
  }
}

/**
 * The most tokens one count of a call is taken at. The usage columns are PostgreSQL INTEGERs
 * (at most 2,147,483,647), and the daily budget adds a call's prompt and completion in one: a
 * billion each keeps that sum within them too; no real call comes near.
 */
const MAX_COUNTED_TOKENS = 1_000_000_000;

/**
 * The usage an endpoint reported, as counts the budget can add up: rounded, at most
 * MAX_COUNTED_TOKENS, and the cached part no more than the prompt. A report that is not counts
 * (a negative number, text, none) is left out, and the call is then estimated like one from a
 * server that reports no usage (model-step.ts): it must neither fail the turn nor give tokens back.
 */
function reportedUsage(reported: {
  prompt_tokens?: unknown;
  completion_tokens?: unknown;
  prompt_tokens_details?: { cached_tokens?: unknown } | null;
}): ModelUsage | undefined {
  const count = (value: unknown): number | undefined =>
    typeof value === 'number' && Number.isFinite(value) && value >= 0 ? Math.min(Math.round(value), MAX_COUNTED_TOKENS) : undefined;
  const promptTokens = count(reported.prompt_tokens);
  const completionTokens = count(reported.completion_tokens);
  if (promptTokens === undefined || completionTokens === undefined) return undefined;
  const cached = count(reported.prompt_tokens_details?.cached_tokens) ?? 0;
  return { promptTokens, completionTokens, cachedPromptTokens: Math.min(cached, promptTokens) };
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
