/** Case- and accent-folded form of a name: "Meditação " and "meditacao" match. */
export function nameKey(text: string): string {
  return text.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase().replace(/\s+/g, ' ').trim();
}

export const UUID_PATTERN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const UUID_PATTERN_GLOBAL = new RegExp(UUID_PATTERN.source, 'gi');

/** What stands where a UUID was removed; a model that copies it back is told to use refs. */
export const HIDDEN_ID = '[hidden id]';

/** Last line of defence for the model-facing boundary: no UUID ever leaves in a string. */
export function stripUuids(text: string, replacement = HIDDEN_ID): string {
  // Every history message passes here on every model step: a text without a dash, most of them,
  // cannot hold a UUID, and finding that out is several times cheaper than running the pattern.
  if (!text.includes('-')) return text;
  return text.replace(UUID_PATTERN_GLOBAL, replacement);
}

/**
 * `text.slice(start, end)` that never leaves half of a surrogate pair (an emoji, a character outside
 * the Basic Multilingual Plane): a cut inside one drops the whole character. A lone half is not
 * Unicode; a model request holding one is refused by servers that decode its JSON strictly (and
 * JSONB refuses it too), so every cut of user text that reaches the model goes through here.
 */
export function sliceText(text: string, start: number, end: number = text.length): string {
  let from = Math.max(0, start);
  let to = Math.min(text.length, end);
  if (from > 0 && from < text.length && isLowSurrogate(text.charCodeAt(from)) && isHighSurrogate(text.charCodeAt(from - 1))) from += 1;
  if (to > 0 && to < text.length && isHighSurrogate(text.charCodeAt(to - 1)) && isLowSurrogate(text.charCodeAt(to))) to -= 1;
  return from < to ? text.slice(from, to) : '';
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;
const isLowSurrogate = (code: number) => code >= 0xdc00 && code <= 0xdfff;

/** Splits text into parts of at most `limit` characters, preferring paragraph, line and word breaks. */
export function splitText(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    const cut = [window.lastIndexOf('\n\n'), window.lastIndexOf('\n'), window.lastIndexOf(' ')].find((i) => i >= limit / 2);
    const end = cut === undefined ? limit : cut;
    parts.push(rest.slice(0, end).trimEnd());
    rest = rest.slice(end).trimStart();
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}
