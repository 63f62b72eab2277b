import type { ModelUsage } from '@assistant/shared';

/**
 * What the turn loop needs from a model: one call with the conversation and the tools, the
 * answer's text streamed through onToken, and the tool calls it planned.
 */
export interface ChatMessage {
  role: 'system' | 'user' | 'assistant' | 'tool';
  content: string;
  /** Assistant messages only: the tool calls the model made. */
  tool_calls?: ToolCall[];
  /** Tool messages only: the call this result answers. */
  tool_call_id?: string;
  /** User messages only: images (data URLs) the model sees with the text. */
  images?: string[];
}

export interface ToolCall {
  id: string;
  name: string;
  /** The raw JSON text of the arguments, as the model produced it. */
  arguments: string;
}

export interface ToolDefinitionForModel {
  name: string;
  description: string;
  /** JSON Schema of the arguments object. */
  parameters: Record<string, unknown>;
}

export interface ChatRequest {
  model: string;
  messages: ChatMessage[];
  /** Empty on the last allowed iteration: the model must answer in text. */
  tools: ToolDefinitionForModel[];
  onToken: (delta: string) => void | Promise<void>;
  signal?: AbortSignal;
  /**
   * The user's IANA time zone (their `user_preferences.timezone`): the offline planner reads
   * "tomorrow at 9" in it. Unset means UTC.
   */
  timezone?: string;
  /**
   * How many of the newest user messages the turn answers (more than one when messages were
   * merged into it; 1 when unset): the offline planner acts on those alone, not on an earlier
   * turn's message that got no answer (a cancelled one).
   */
  turnMessages?: number;
}

export interface ChatResponse {
  content: string;
  toolCalls: ToolCall[];
  usage?: ModelUsage;
}

export interface ChatModel {
  readonly name: string;
  complete(request: ChatRequest): Promise<ChatResponse>;
}
