/**
 * Case- and accent-folded form of a name: "Meditação " and "meditacao" match. Compatibility forms
 * fold too (the ligature in "Oﬃce", full-width "ＲＥＵＮＩÃＯ", a no-break space), and format
 * characters that show nothing (a zero-width space pasted with the name) are dropped.
 * migrations/0259_name_keys_compatibility.sql brought older keys to this form.
 */
export function nameKey(text: string): string {
  return text
    .normalize('NFKD')
    .replace(/[\p{M}\p{Cf}]/gu, '')
    .toLowerCase()
    .replace(/\s+/g, ' ')
    .trim();
}

export const UUID_PATTERN = /[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}/i;
const UUID_PATTERN_GLOBAL = new RegExp(UUID_PATTERN.source, 'gi');

/** What stands where a UUID was removed; a model that copies it back is told to use refs. */
export const HIDDEN_ID = '[hidden id]';

/** Whether an argument names something by a UUID, or by the mark that stands for one: refused, refs only. */
export function namesByUuid(value: string): boolean {
  return UUID_PATTERN.test(value) || value.includes(HIDDEN_ID);
}

/** Last line of defence for the model-facing boundary: no UUID ever leaves in a string. */
export function stripUuids(text: string, replacement = HIDDEN_ID): string {
  // Every history message passes here on every model step: a text without a dash, most of them,
  // cannot hold a UUID, and finding that out is several times cheaper than running the pattern.
  if (!text.includes('-')) return text;
  return text.replace(UUID_PATTERN_GLOBAL, replacement);
}

/**
 * A user's value in double quotes for a tool's error, written as a JSON string: a quote, backslash
 * or line break in it is escaped, so it cannot end the value early, and the error's shape
 * (normalizeToolError, which reads such escapes) is the same whatever the name.
 */
export function quoted(value: string): string {
  return JSON.stringify(value);
}

/** `text` as PostgreSQL stores it, in a text column or inside JSONB: no NUL, and a lone surrogate half replaced by U+FFFD. */
export function storableText(text: string): string {
  return text.replaceAll('\u0000', '').toWellFormed();
}

/** Whether a cut at `index` falls between the two halves of a surrogate pair (an emoji, a character outside the BMP). */
function splitsPair(text: string, index: number): boolean {
  if (index <= 0 || index >= text.length) return false;
  const before = text.charCodeAt(index - 1);
  const after = text.charCodeAt(index);
  return before >= 0xd800 && before <= 0xdbff && after >= 0xdc00 && after <= 0xdfff;
}

/**
 * `text.slice(start, end)` that never leaves half of a surrogate pair: a cut inside one drops the
 * whole character. A lone half is not Unicode; a model request holding one is refused by servers
 * that decode its JSON strictly (and JSONB refuses it too), so every cut of user text that
 * reaches the model goes through here.
 */
export function sliceText(text: string, start: number, end: number = text.length): string {
  const from = Math.max(0, start) + (splitsPair(text, start) ? 1 : 0);
  const to = Math.min(text.length, end) - (splitsPair(text, end) ? 1 : 0);
  return from < to ? text.slice(from, to) : '';
}

/** How many characters `text` holds as PostgreSQL and zod count them (code points): an emoji is one, not two UTF-16 units. */
export function codePointLength(text: string): number {
  return text.length - (text.match(/[\ud800-\udbff][\udc00-\udfff]/g)?.length ?? 0);
}

/** The UTF-16 index right after the first `count` code points of `text` (its length when it has fewer). */
export function codePointOffset(text: string, count: number): number {
  let index = 0;
  for (let left = count; left > 0 && index < text.length; left--) index += (text.codePointAt(index) ?? 0) > 0xffff ? 2 : 1;
  return index;
}

/** `text` in at most `max` characters: cut (never through an emoji) and ended with `...` when longer. */
export function clipText(text: string, max: number): string {
  return text.length > max ? `${sliceText(text, 0, max - 3)}...` : text;
}

const graphemes = new Intl.Segmenter(undefined, { granularity: 'grapheme' });

/**
 * `index`, moved back to the start of the character it falls inside: a cut through an emoji made
 * of several code points (a skin tone, a family joined with ZWJ, a keycap, a flag) shows each part
 * half of it, and a cut between the halves of a surrogate pair leaves "�" or is refused. A single
 * character longer than `index` (a pile of combining marks) is cut, never through a pair.
 * Lengths here are UTF-16 units, as the providers' limits are counted.
 */
export function safeCutIndex(text: string, index: number): number {
  if (index <= 0 || index >= text.length) return index;
  // Whether `index` is a boundary depends only on the characters up to it and the one at it (two units when a pair).
  let start = 0;
  for (const segment of graphemes.segment(text.slice(0, index + 2))) if (segment.index <= index) start = segment.index;
  if (start > 0) return start;
  return splitsPair(text, index) && index > 1 ? index - 1 : index;
}

/** Splits text into parts of at most `limit` characters, preferring paragraph, line and word breaks. */
export function splitText(text: string, limit: number): string[] {
  const parts: string[] = [];
  let rest = text;
  while (rest.length > limit) {
    const window = rest.slice(0, limit);
    const cut = [window.lastIndexOf('\n\n'), window.lastIndexOf('\n'), window.lastIndexOf(' ')].find((i) => i >= limit / 2);
    const end = cut === undefined ? safeCutIndex(rest, limit) : cut;
    parts.push(rest.slice(0, end).trimEnd());
    rest = rest.slice(end).trimStart();
  }
  if (rest.length > 0 || parts.length === 0) parts.push(rest);
  return parts;
}
