import { getTool, mcpServerOf, toolsForModel, type Db, type EventWriter, type McpCatalog, type SharedMetrics } from '@assistant/shared';
import type { ChatModel, ChatRequest, ChatResponse } from '../llm/chat-model';
import { stopAtBudget } from './budget-check';
import { buildModelMessages } from './context';
import { callSignature, type TurnTransitions } from './transitions';
import { TokenStream } from './token-stream';
import type { TurnPhotos } from './turn-photo';
import type { TurnState } from './turn-state';
import { boundedTokens, screenContent, screenToolCalls, type ScreenedCall } from './untrusted-output';

/** Three identical consecutive tool calls stop the loop (docs/agent.md#iterations). */
const LOOP_LENGTH = 3;

export interface ModelStepDeps {
  db: Db;
  transitions: TurnTransitions;
  events: EventWriter;
  model: ChatModel;
  defaultModel: string;
  /** MODEL_ALLOWLIST: a user's model chosen before the list was set (or narrowed) falls back to the default. */
  modelAllowlist: readonly string[] | undefined;
  historyTokenBudget: number;
  maxToolCallsPerStep: number;
  metrics: SharedMetrics;
  mcp: McpCatalog;
  photos: TurnPhotos;
  /** DAILY_TOKEN_BUDGET: the default for users without an override. */
  dailyTokenBudget: number;
}

/**
 * One iteration: claim the turn's model call, call the model with the conversation (streaming
 * its text as `token` events), and store what it decided: tasks to run, or the answer. On the
 * last allowed iteration the model gets no tools, so it must answer.
 */
export async function runModelStep(deps: ModelStepDeps, state: TurnState, claim: string): Promise<boolean> {
  const { turn } = state;
  if (turn.claim !== claim && !(await deps.transitions.claim(state, claim))) return false;

  if (await stopAtBudget(deps, state)) return true;

  const last = turn.iterations + 1 >= turn.max_iterations;
  // Read on every step, also the last: the system prompt lists them and must not change for it.
  const mcpTools = await deps.mcp.tools();
  const { messages, timeZone } = await buildModelMessages(deps.db, turn, deps.historyTokenBudget, mcpTools);
  const tokens = new TokenStream((deltas) =>
    deps.events.emitMany(turn.id, deltas.map((delta) => ({ event: { type: 'token' as const, delta } }))),
  );
  const response = await measuredCall(deps, {
    model: allowedModel(deps, turn.model),
    messages: await deps.photos.attach(turn, messages),
    timezone: timeZone,
    tools: last ? [] : toolsForModel(mcpTools),
    onToken: boundedTokens(async (delta) => {
      tokens.push(delta);
    }),
  });
  await tokens.drain();

  // A tool exists when it is built in, in the MCP catalogue the model was just offered, or of a
  // configured MCP server not connected yet (the tool worker then fails it with a clear result).
  const known = (name: string) =>
    getTool(name) !== undefined ||
    mcpTools.some((tool) => tool.name === name) ||
    deps.mcp.configured.includes(mcpServerOf(name) ?? '');
  const calls = screenToolCalls(response.toolCalls, turn.iterations + 1, deps.maxToolCallsPerStep, known);
  if (!last && calls.length > 0) {
    const repeated = await repeatedCall(deps.transitions, turn.id, calls);
    if (repeated) {
      const explanation =
        `I stopped: I was about to call ${repeated} with the same arguments ${LOOP_LENGTH} times in a row, ` +
        'which means something is not working as expected. Tell me how you would like to proceed.';
      return deps.transitions.answer(state, claim, explanation, 'limit_reached', { countIteration: true, usage: response.usage });
    }
    return deps.transitions.planTasks(state, claim, screenContent(response.content), calls, mcpTools, response.usage);
  }
  const content =
    response.content.trim() !== '' || !last
      ? screenContent(response.content)
      : 'I reached the maximum number of steps for one message before finishing.';
  return deps.transitions.answer(state, claim, content, last ? 'limit_reached' : 'completed', {
    countIteration: true,
    usage: response.usage,
    ...(last ? { iterationLimit: turn.max_iterations } : {}),
  });
}

function allowedModel(deps: ModelStepDeps, chosen: string | null): string {
  if (chosen === null) return deps.defaultModel;
  return deps.modelAllowlist && !deps.modelAllowlist.includes(chosen) ? deps.defaultModel : chosen;
}

/** The name of a tool that would be called LOOP_LENGTH times in a row with the same arguments, if any. */
async function repeatedCall(transitions: TurnTransitions, turnId: string, calls: ScreenedCall[]): Promise<string | undefined> {
  const history = await transitions.recentCallSignatures(turnId, LOOP_LENGTH - 1);
  // A refused call has no arguments to compare: it never counts as a repeat (max_iterations bounds it).
  const sequence = [...history, ...calls.map((call) => (call.args ? callSignature(call.name, call.args) : `refused ${call.id}`))];
  for (let i = LOOP_LENGTH - 1; i < sequence.length; i++) {
    const window = sequence.slice(i - LOOP_LENGTH + 1, i + 1);
    if (window.every((signature) => signature === window[0])) return window[0]?.split(' ')[0];
  }
  return undefined;
}

async function measuredCall(deps: ModelStepDeps, request: ChatRequest): Promise<ChatResponse> {
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
