import { modelTools, type Db, type EventWriter, type SharedMetrics } from '@assistant/shared';
import type { ChatModel, ChatRequest, ChatResponse, ToolCall } from '../llm/chat-model';
import { buildModelMessages } from './context';
import { callSignature, parseArguments, type TurnTransitions } from './transitions';
import type { TurnState } from './turn-state';

/** Three identical consecutive tool calls stop the loop (CONTRACT §5). */
const LOOP_LENGTH = 3;

export interface ModelStepDeps {
  db: Db;
  transitions: TurnTransitions;
  events: EventWriter;
  model: ChatModel;
  defaultModel: string;
  historyTokenBudget: number;
  metrics: SharedMetrics;
}

/**
 * One iteration: claim the turn's model call, call the model with the conversation (streaming
 * its text as `token` events), and store what it decided: tasks to run, or the answer. On the
 * last allowed iteration the model gets no tools, so it must answer.
 */
export async function runModelStep(deps: ModelStepDeps, state: TurnState, claim: string): Promise<boolean> {
  const { turn } = state;
  if (turn.claim !== claim && !(await deps.transitions.claim(state, claim))) return false;

  const last = turn.iterations + 1 >= turn.max_iterations;
  const messages = await buildModelMessages(deps.db, turn, deps.historyTokenBudget);
  const response = await measuredCall(deps, {
    model: turn.model ?? deps.defaultModel,
    messages,
    tools: last ? [] : modelTools,
    onToken: async (delta) => {
      await deps.events.emit(turn.id, { type: 'token', delta });
    },
  });

  const calls = uniqueCallIds(response.toolCalls, turn.iterations + 1);
  if (!last && calls.length > 0) {
    const repeated = await repeatedCall(deps.transitions, turn.id, calls);
    if (repeated) {
      const explanation =
        `I stopped: I was about to call ${repeated} with the same arguments ${LOOP_LENGTH} times in a row, ` +
        'which means something is not working as expected. Tell me how you would like to proceed.';
      return deps.transitions.answer(state, claim, explanation, 'limit_reached', { countIteration: true });
    }
    return deps.transitions.planTasks(state, claim, response.content, calls);
  }
  const content =
    response.content.trim() !== '' || !last
      ? response.content
      : 'I reached the maximum number of steps for one message before finishing.';
  return deps.transitions.answer(state, claim, content, last ? 'limit_reached' : 'completed', {
    countIteration: true,
    ...(last ? { iterationLimit: turn.max_iterations } : {}),
  });
}

/** Tool results are matched to calls by id: give any missing or repeated id a unique one. */
function uniqueCallIds(calls: ToolCall[], iteration: number): ToolCall[] {
  const seen = new Set<string>();
  return calls.map((call, index) => {
    const id = call.id && !seen.has(call.id) ? call.id : `call_${iteration}_${index + 1}`;
    seen.add(id);
    return { ...call, id };
  });
}

/** The name of a tool that would be called LOOP_LENGTH times in a row with the same arguments, if any. */
async function repeatedCall(transitions: TurnTransitions, turnId: string, calls: ToolCall[]): Promise<string | undefined> {
  const history = await transitions.recentCallSignatures(turnId, LOOP_LENGTH - 1);
  const sequence = [...history, ...calls.map((call) => callSignature(call.name, parseArguments(call.arguments)))];
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
    }
    return response;
  } catch (error) {
    deps.metrics.inc('assistant_model_calls_total', { outcome: 'error' });
    throw error;
  } finally {
    deps.metrics.observe('assistant_model_call_duration_seconds', {}, (performance.now() - started) / 1000);
  }
}
