import { sliceText, stripUuids } from '../text';

/** Long enough to tell errors apart, short enough for an index key and a prompt line. */
const MAX_PATTERN_CHARS = 500;

/** A normalised candidate, with where or when it is: ` in "…"`, ` at the top level`, ` at <n>-<n>-<n> <n> (Zone)`. */
const CANDIDATE = String.raw`"…"(?: in "…"| at [^,[\]]*)? \[ID: <ref>\]`;
const CANDIDATE_LIST = new RegExp(`${CANDIDATE}(?:, ${CANDIDATE})+`, 'g');

/**
 * The shape of a tool error without its particulars (docs/memory.md#gotchas): UUIDs and refs
 * become `<id>` and `<ref>`, numbers `<n>`, quoted values `"…"`, so "No folder named "Work"" and
 * "No folder named "Home"" count as the same error. A list of candidates reads the same whatever
 * its length and wherever or whenever its candidates are. Apostrophes inside words ("don't") are
 * not quotes and stay; an escaped quote (\") does not end a quoted value.
 */
export function normalizeToolError(message: string): string {
  const pattern = stripUuids(message, '<id>')
    // A backslash escapes the next character: a JSON string's \" is inside it (a name in an error,
    // written by `quoted`, or a refused argument text's excerpt). "…" ends only at a straight quote
    // and “…” only at a closing curly one, so a curly quote inside a name ends nothing.
    .replace(/"(?:[^"\\\n]|\\.)*"|“[^”\n]*”/g, '"…"')
    .replace(/(^|[\s([{:=,])['‘`][^'‘’`\n]*['’`](?=$|[\s)\]}.,;:!?])/g, '$1"…"')
    .replace(/\b[a-z]+_\d+\b/g, '<ref>')
    .replace(/\d+(?:[.,:]\d+)*/g, '<n>')
    .replace(CANDIDATE_LIST, '"…" [ID: <ref>]')
    .replace(/\s+/g, ' ')
    .trim();
  // Never half an emoji: the pattern is stored, and shown by GET /v1/gotchas.
  return sliceText(pattern, 0, MAX_PATTERN_CHARS);
}
