import {
  answer,
  claimModelCall,
  getTool,
  isLastIteration,
  loadStepInput,
  mcpServerOf,
  planTasks,
  together,
  toolsForModel,
  type EventWriter,
  type McpCatalog,
  type Semaphore,
  type SessionHistories,
  type SharedMetrics,
  type TurnMachine,
  type TurnState,
} from '@assistant/shared';
import { allowedModel } from '../llm/allowed-model';
import { callUsage } from '../llm/call-usage';
import { measuredCall } from '../llm/measured-call';
import type { ChatModel, ChatRequest } from '../llm/chat-model';
import { stopAtBudget } from './budget-check';
import { buildModelMessages, PITFALLS_SHOWN, pitfallTools } from './context';
import { LOOP_LENGTH, repeatedCall } from './repeated-calls';
import { relevantDocuments } from './relevant-documents';
import { TokenStream } from './token-stream';
import type { TurnPhotos } from './turn-photo';
import { boundedTokens, screenContent, screenToolCalls } from './untrusted-output';

const LIMIT_REACHED = 'I reached the maximum number of steps for one message before finishing.';
const NO_ANSWER = 'I have no answer to that. Could you ask again, perhaps in other words?';

export interface ModelStepDeps {
  machine: TurnMachine;
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
  /** MODEL_CONCURRENCY: the calls this process has in flight. */
  modelCalls: Semaphore;
  /** Its sessions' latest messages, kept between steps. */
  histories: SessionHistories;
}

/**
 * One iteration: claim the turn's model call, call the model with the conversation (streaming
 * its text as `token` events), and store what it decided: tasks to run, or the answer. On the
 * last allowed iteration the model gets no tools, so it must answer.
 *
 * Answers true when the turn now waits for something outside this job (its first tool was sent,
 * or it ended), so reading it again could only decide "wait"; false when there is more to decide.
 */
export async function runModelStep(deps: ModelStepDeps, state: TurnState, claim: string): Promise<boolean> {
  const { turn } = state;
  const last = isLastIteration(turn);
  // Nothing is claimed or read for the call until it may start: a step waiting its turn holds
  // next to nothing.
  const outcome = await deps.modelCalls.use(async () => {
    // Read on every step, also the last: the system prompt lists them and must not change for it.
    const mcpTools = await deps.mcp.tools();
    // The claim, the call's input and the turn's documents in one round trip; they are used only if
    // the claim is ours.
    const [claimed, input, documents] = await together(
      deps.machine.db,
      (client) => claimModelCall(client, state, claim),
      (client) =>
        loadStepInput(
          client,
          { userId: turn.user_id, sessionId: turn.session_id },
          { defaultBudget: deps.dailyTokenBudget, tools: pitfallTools(mcpTools), pitfallsShown: PITFALLS_SHOWN, histories: deps.histories },
        ),
      (client) => relevantDocuments(client, turn),
    );
    if (!claimed) return 'unclaimed';
    const { user } = input;
    if (await stopAtBudget(deps.machine.db, user.allowance, state)) return undefined;
    const messages = buildModelMessages(turn, input, documents, deps.historyTokenBudget, mcpTools);
    // A call this job claimed before (its earlier run failed or died) may have streamed a part already.
    const streamed = turn.claim === null ? '' : await deps.events.trailingTokens(turn.id);
    const tokens = new TokenStream(
      (deltas) =>
        deps.events.emitMany(
          turn.id,
          deltas.map((delta) => ({ event: { type: 'token' as const, delta } })),
        ),
      streamed.length,
    );
    const request: ChatRequest = {
      model: allowedModel(deps, turn.model),
      messages: await deps.photos.attach(turn, messages),
      timezone: user.timeZone,
      turnMessages: turn.input_count,
      tools: last ? [] : toolsForModel(mcpTools),
      onToken: boundedTokens(async (delta) => {
        tokens.push(delta);
      }),
    };
    const response = await measuredCall(deps, request);
    const usage = callUsage(deps.model, request, response);
    const shownIds = messages.flatMap((message) => message.tool_calls?.map((call) => call.id) ?? []);
    return { response: { ...response, ...(usage ? { usage } : {}) }, mcpTools, claimed, tokens, timeZone: user.timeZone, shownIds };
  });
  // Another job holds the model call: it decides what comes next.
  if (outcome === 'unclaimed') return false;
  // The budget was spent (or the user disabled): the turn has ended, and its `error` and `done` go out now.
  if (!outcome) {
    await deps.machine.outbox.flush(turn.id);
    return true;
  }
  const { response, mcpTools, claimed, tokens, timeZone, shownIds } = outcome;
  // The last tokens may still be on their way to Redis: the step's rows are stored meanwhile, and
  // its events (the plan or the answer) go out after them.
  const earlierEvents = () => tokens.drain();

  // A tool exists when it is built in, in the MCP catalogue the model was just offered, or of a
  // configured MCP server that has listed no tools yet (the tool worker then fails it with a clear
  // result). A name a listed server does not have is unknown: no approval is asked for it.
  const known = (name: string) => {
    const server = mcpServerOf(name) ?? '';
    return (
      getTool(name) !== undefined ||
      mcpTools.some((tool) => tool.name === name) ||
      (deps.mcp.configured.includes(server) && !mcpTools.some((tool) => tool.server === server))
    );
  };
  const calls = screenToolCalls(response.toolCalls, turn.iterations + 1, deps.maxToolCallsPerStep, known, shownIds);
  if (!last && calls.length > 0) {
    const repeated = await repeatedCall(deps.machine.db, turn, calls);
    if (repeated) {
      const explanation =
        `I stopped: I was about to call ${repeated} with the same arguments ${LOOP_LENGTH} times in a row, ` +
        'which means something is not working as expected. Tell me how you would like to proceed.';
      // The answer is the text the model wrote beside the calls (already streamed), then why the
      // turn stopped, streamed after it: the tokens, the message and the history hold the same.
      const ending = response.content.trim() === '' ? explanation : `\n\n${explanation}`;
      tokens.push(ending);
      return answer(deps.machine, state, claim, `${screenContent(response.content)}${ending}`, 'limit_reached', {
        countIteration: true,
        usage: response.usage,
        earlierEvents,
      });
    }
    const planned = await planTasks(deps.machine, state, claimed, {
      content: screenContent(response.content),
      calls,
      mcpTools,
      timeZone,
      usage: response.usage,
      earlierEvents,
    });
    return planned === 'dispatched';
  }
  // A blank answer would leave the user with nothing (a chat sends no empty message): one of
  // these stands in for it, streamed like the model's own text.
  const blank = response.content.trim() === '';
  const content = blank ? (last ? LIMIT_REACHED : NO_ANSWER) : screenContent(response.content);
  if (blank) tokens.push(content);
  return answer(deps.machine, state, claim, content, last ? 'limit_reached' : 'completed', {
    countIteration: true,
    usage: response.usage,
    earlierEvents,
    ...(last ? { iterationLimit: turn.max_iterations } : {}),
  });
}
