/**
 * A message as the offline planner reads it: `raw` as written, and `key` for matching, folded to
 * lower case without accents ("Hábito" and "habito" read the same) and with quoted values masked.
 * Both have the same length, so a match's indices in `key` slice the value out of `raw`.
 */
export interface FoldedText {
  raw: string;
  key: string;
}

/** Lower case without accents, one UTF-16 unit for one (a character that would change length stays as is). */
export function fold(raw: string): string {
  let key = '';
  for (const ch of raw) {
    const folded = ch.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
    key += folded.length === ch.length ? folded : ch;
  }
  return key;
}

const CLOSING: Record<string, string> = { '"': '"', '“': '”', '«': '»', '‘': '’' };

/**
 * Masks what is inside "…", “…”, «…» or ‘…’ with underscores, so keywords and separators in a
 * quoted name are not read as commands. One pass over one line: an opening mark with no closing
 * mark after it is remembered, so no later mark of that kind searches the rest of the line again.
 */
function maskQuotes(line: string): string {
  let masked = '';
  const unclosed = new Set<string>();
  let i = 0;
  while (i < line.length) {
    const open = line.charAt(i);
    const close = CLOSING[open];
    if (close !== undefined && !unclosed.has(open)) {
      const end = line.indexOf(close, i + 1);
      if (end !== -1) {
        masked += open + '_'.repeat(end - i - 1) + close;
        i = end + 1;
        continue;
      }
      unclosed.add(open);
    }
    masked += open;
    i += 1;
  }
  return masked;
}

// A run of spaces, or a tab: one space outside quotes (inside them the key is masked, so a quoted
// name keeps its spaces). Besides "Plan  2026" meaning "Plan 2026", this keeps matching linear: a
// lazy name followed by `\s+` would scan a run again from each of its spaces.
const SPACES = /\s{2,}|[^\S ]/g;

/** One line of a message (quotes never span lines), its spaces collapsed. */
export function foldedLine(line: string): FoldedText {
  const masked = maskQuotes(fold(line));
  let raw = '';
  let key = '';
  let from = 0;
  for (const run of masked.matchAll(SPACES)) {
    raw += `${line.slice(from, run.index)} `;
    key += `${masked.slice(from, run.index)} `;
    from = run.index + run[0].length;
  }
  return { raw: raw + line.slice(from), key: key + masked.slice(from) };
}

export const sliceText = (text: FoldedText, start: number, end: number): FoldedText => ({
  raw: text.raw.slice(start, end),
  key: text.key.slice(start, end),
});

// Emoji around a command are decoration, not part of a name: "create folder Work 👍".
const DECORATION = /^(?:\p{Extended_Pictographic}|\p{Regional_Indicator}|\p{Emoji_Modifier}|\u{FE0F}|\u{200D})$/u;
const skippable = (ch: string, extra: string) => ch !== '' && (extra.includes(ch) || /\s/.test(ch) || DECORATION.test(ch));
const isSurrogate = (code: number, low: boolean) => code >= (low ? 0xdc00 : 0xd800) && code <= (low ? 0xdfff : 0xdbff);

/**
 * Index after the spaces, emoji (and `extra` characters) from `from` on. Trimming goes by index
 * because a regular expression for a trailing run (`[\s,]*$`) backtracks quadratically over a
 * long run.
 */
export function skip(text: string, from: number, extra: string): number {
  let i = from;
  while (i < text.length) {
    const size = isSurrogate(text.charCodeAt(i), false) ? 2 : 1;
    if (!skippable(text.slice(i, i + size), extra)) break;
    i += size;
  }
  return i;
}

/** Index where the spaces, emoji (and `extra` characters) ending at `to` begin. */
export function skipBack(text: string, to: number, extra: string): number {
  let i = to;
  while (i > 0) {
    const size = i > 1 && isSurrogate(text.charCodeAt(i - 1), true) ? 2 : 1;
    if (!skippable(text.slice(i - size, i), extra)) break;
    i -= size;
  }
  return i;
}
