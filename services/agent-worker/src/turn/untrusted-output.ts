import { UUID_PATTERN } from '@assistant/shared';
import type { ToolCall } from '../llm/chat-model';

/**
 * What a model sends is untrusted input (docs/agent.md#untrusted-model-output): before anything of a model step is stored,
 * published or sent back to the model, it is bounded here. A call that cannot run becomes a
 * failed task with a short placeholder in storage, never the model's raw text.
 */
export const OUTPUT_LIMITS = {
  argumentBytes: 64 * 1024,
  /** As deep as a client's JSON may nest (docs/api.md#errors); real tool arguments nest two or three levels. */
  argumentDepth: 64,
  nameChars: 64,
  callIdChars: 64,
  /** Far above any real answer; only a runaway or hostile output is cut. */
  contentChars: 100_000,
  /** How much of a refused argument text the model is shown, so it can correct itself. */
  excerptChars: 200,
};

export interface ScreenedCall {
  id: string;
  /** The tool's name, cleaned and bounded (a name the registry does not know keeps its cleaned text). */
  name: string;
  /** The argument text stored and sent back to the model: canonical JSON, or `{}` for a refused call. */
  arguments: string;
  /** The parsed arguments, when the call may run. */
  args?: Record<string, unknown>;
  /** Why the call cannot run; the task fails with this, without a retry. */
  problem?: string;
  /**
   * The refusal as it counts toward the tool's gotchas (docs/memory.md#gotchas), without the
   * model's own text (a gotcha is shown in every session); absent for a tool that does not exist.
   */
  mistake?: string;
  /** Past the step's MAX_TOOL_CALLS_PER_STEP: answered "not run". */
  notRun?: boolean;
}

/**
 * Bounds every call of one model step. Runnable calls past `maxCalls` keep their id and name (the model
 * must get a result for each) but not their arguments, and are marked as not run.
 *
 * `earlierIds` are the call ids the model was shown (the conversation's earlier steps and turns).
 */
export function screenToolCalls(
  calls: ToolCall[],
  iteration: number,
  maxCalls: number,
  isKnown: (name: string) => boolean,
  earlierIds: Iterable<string> = [],
): ScreenedCall[] {
  const seen = new Set<string>(earlierIds);
  let runnable = 0;
  return calls.map((call, index) => {
    // Tool results are matched to calls by id, and some APIs refuse a conversation that repeats
    // one: a missing, odd or already used id (this step's, or one of an earlier step or turn) gets
    // a unique one. So does one holding a UUID (some servers make them so): every later request
    // repeats the id.
    const cleanId = cleanText(call.id, OUTPUT_LIMITS.callIdChars);
    const usable = cleanId !== '' && cleanId === call.id && !seen.has(cleanId) && !UUID_PATTERN.test(cleanId);
    let id = usable ? cleanId : `call_${iteration}_${index + 1}`;
    for (let n = 2; !usable && seen.has(id); n++) id = `call_${iteration}_${index + 1}_${n}`;
    seen.add(id);
    const name = cleanText(call.name, OUTPUT_LIMITS.nameChars);
    if (name !== call.name || !isKnown(name)) {
      return { id, name: name === '' ? 'unnamed' : name, arguments: '{}', problem: `There is no tool named "${name}".` };
    }
    // Refused calls do not run, so only the runnable ones count against the cap.
    if (runnable >= maxCalls) return { id, name, arguments: '{}', notRun: true };
    const parsed = parseUntrustedArguments(call.arguments);
    if ('problem' in parsed) return { id, name, arguments: '{}', problem: parsed.problem, mistake: parsed.mistake };
    runnable += 1;
    return { id, name, arguments: JSON.stringify(parsed.args), args: parsed.args };
  });
}

/**
 * The model's argument text as an object, or why it is refused: `problem` for the model, which
 * may quote its text so it can correct itself, and `mistake` for the tool's gotchas, which never does.
 */
export function parseUntrustedArguments(text: string): { args: Record<string, unknown> } | { problem: string; mistake: string } {
  const refused = (problem: string, mistake = problem) => ({ problem, mistake });
  const bytes = Buffer.byteLength(text, 'utf8');
  if (bytes > OUTPUT_LIMITS.argumentBytes) {
    return refused(`The arguments were ${bytes} bytes, over the limit of ${OUTPUT_LIMITS.argumentBytes}; the call was not run.`);
  }
  const excerpt = `(they began: ${JSON.stringify(cleanText(text, OUTPUT_LIMITS.excerptChars))})`;
  // Measured before parsing, so no recursive step below ever meets deeper nesting than this.
  if (nestingDepth(text) > OUTPUT_LIMITS.argumentDepth) {
    return refused(`The arguments nest deeper than ${OUTPUT_LIMITS.argumentDepth} levels; the call was not run.`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text.trim() === '' ? '{}' : text);
  } catch {
    return refused(`The arguments were not valid JSON ${excerpt}.`, 'The arguments were not valid JSON.');
  }
  if (value === null || typeof value !== 'object' || Array.isArray(value)) {
    return refused(`The arguments were not a JSON object ${excerpt}.`, 'The arguments were not a JSON object.');
  }
  if (!storableStrings(value)) {
    return refused('The arguments held a NUL character or broken Unicode, which cannot be stored; the call was not run.');
  }
  return { args: value as Record<string, unknown> };
}

const CUT_NOTE = `\n\n[… the rest of this answer was cut: it was over ${OUTPUT_LIMITS.contentChars} characters]`;

/** The answer text as it may be stored: no NUL (PostgreSQL refuses it), well-formed, bounded. */
export function screenContent(text: string): string {
  const clean = text.replaceAll('\u0000', '');
  if (clean.length <= OUTPUT_LIMITS.contentChars) return clean.toWellFormed();
  return `${clean.slice(0, OUTPUT_LIMITS.contentChars).toWellFormed()}${CUT_NOTE}`;
}

/**
 * Streams what screenContent keeps of an answer, so the deltas add up to the stored text: no NUL,
 * at most OUTPUT_LIMITS.contentChars characters, then the note of the cut once, and nothing more.
 */
export function boundedTokens(emit: (delta: string) => Promise<void>): (delta: string) => Promise<void> {
  let left = OUTPUT_LIMITS.contentChars;
  let cut = false;
  return async (delta) => {
    if (cut) return;
    const clean = delta.replaceAll('\u0000', '');
    const part = clean.slice(0, left);
    left -= part.length;
    cut = part.length < clean.length;
    await emit(cut ? `${part}${CUT_NOTE}` : part);
  };
}

/** Printable text only (no NUL or other control characters, well-formed), at most `max` characters. */
function cleanText(text: string, max: number): string {
  // Cut before the surrogate repair, so a cut through a pair cannot leave half of it.
  return (
    text
      .slice(0, max * 2)
      // eslint-disable-next-line no-control-regex
      .replace(/[\u0000-\u001f\u007f]/g, '')
      .slice(0, max)
      .toWellFormed()
  );
}

/** The deepest nesting of arrays and objects in a JSON text, in one pass (strings skipped). */
export function nestingDepth(text: string): number {
  let depth = 0;
  let deepest = 0;
  let inString = false;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      if (c === 0x5c)
        i++; // backslash: skip the escaped character
      else if (c === 0x22) inString = false;
    } else if (c === 0x22) inString = true;
    else if (c === 0x5b || c === 0x7b) deepest = Math.max(deepest, ++depth);
    else if (c === 0x5d || c === 0x7d) depth--;
  }
  return deepest;
}

/** True when every key and string value can go into JSONB: no NUL, no lone surrogate. */
function storableStrings(root: object): boolean {
  const stack: unknown[] = [root];
  while (stack.length > 0) {
    const value = stack.pop();
    if (typeof value === 'string') {
      if (value.includes('\u0000') || !value.isWellFormed()) return false;
    } else if (value !== null && typeof value === 'object') {
      for (const [key, item] of Object.entries(value)) {
        if (key.includes('\u0000') || !key.isWellFormed()) return false;
        stack.push(item);
      }
    }
  }
  return true;
}
