import type { Token, Tokens } from 'marked';
import { safeCutIndex } from '@assistant/shared';
import { inlineTokens, markdownBlocks, renderBlock, renderMarkdown } from './markdown-render';
import type { Markup } from './markup';

/**
 * A run of the answer rendered in each requested dialect, and what separated it from the run
 * before it in the source (a blank line between blocks, a newline between lines, nothing
 * between the words of one line, whose spacing the pieces themselves carry).
 */
interface Piece {
  renderings: string[];
  sep: string;
}

/**
 * Splits a Markdown answer into chat messages of at most `limit` characters in every dialect
 * of `markups` (the first is what is sent; the others are fallbacks of the same part, such as
 * Telegram's plain resend). Cuts fall between blocks, then lines, then words; a block that fits
 * is never cut, and every part is rendered on its own, so each is valid by itself.
 */
export function formatParts(markdown: string, markups: readonly Markup[], limit: number): string[][] {
  const pieces = markdownBlocks(markdown).flatMap((block) => separated(fitBlock(block, markups, limit), '\n\n'));
  return pack(pieces, markups.length, limit);
}

function piece(renderings: string[], sep = ''): Piece {
  return { renderings, sep };
}

const longest = (renderings: string[]) => Math.max(...renderings.map((text) => text.length));

/** The first piece of a group takes the separator that precedes the group. */
function separated(pieces: Piece[], sep: string): Piece[] {
  const [first, ...rest] = pieces;
  return first ? [{ ...first, sep }, ...rest] : [];
}

function fitBlock(block: Token, markups: readonly Markup[], limit: number): Piece[] {
  const whole = markups.map((markup) => renderBlock(block, markup));
  if (longest(whole) <= limit) return [piece(whole)];
  if (block.type === 'code') return fitCode(block as Tokens.Code, markups, limit);
  const pieces: Piece[] = [];
  let sep = '';
  for (const line of block.raw.replace(/\n+$/, '').split('\n')) {
    if (line.trim() === '') {
      sep = '\n\n';
      continue;
    }
    pieces.push(...separated(fitLine(line, markups, limit), sep));
    sep = '\n';
  }
  return pieces;
}

/** A code block too long for one message becomes several blocks, cut between lines. */
function fitCode(code: Tokens.Code, markups: readonly Markup[], limit: number): Piece[] {
  const lang = code.lang ?? '';
  const render = (text: string) => markups.map((markup) => markup.pre(text, lang));
  const pieces: Piece[] = [];
  let group: string[] = [];
  const flush = () => {
    if (group.length > 0) pieces.push(piece(render(group.join('\n')), '\n'));
    group = [];
  };
  for (const line of code.text.split('\n')) {
    if (longest(render([...group, line].join('\n'))) <= limit) {
      group.push(line);
      continue;
    }
    flush();
    if (longest(render(line)) <= limit) group.push(line);
    else for (const chunk of hardChunks(line, (text) => longest(render(text)), limit)) pieces.push(piece(render(chunk), '\n'));
  }
  flush();
  return pieces;
}

/**
 * One line longer than a message: its inline Markdown is kept whole (a link, a bold run) and
 * its plain text is cut between words.
 */
function fitLine(line: string, markups: readonly Markup[], limit: number): Piece[] {
  const whole = markups.map((markup) => renderMarkdown(line, markup));
  if (longest(whole) <= limit) return [piece(whole)];
  const pieces: Piece[] = [];
  for (const token of inlineTokens(line)) {
    const words = token.type === 'text' && !(token as Tokens.Text).tokens ? (token.raw.match(/\S+\s*|\s+/g) ?? []) : [token.raw];
    for (const word of words) {
      const literal = token.type === 'text' || token.type === 'escape';
      const render = (text: string) => markups.map((markup) => (literal ? markup.text(text) : renderMarkdown(text, markup)));
      const rendered = render(word);
      if (longest(rendered) <= limit) pieces.push(piece(rendered));
      else {
        // A word (or a link, a bold run) longer than a message: cut as plain text, between its words if it has any.
        const plain = (text: string) => markups.map((markup) => markup.text(text));
        for (const run of word.match(/\S+\s*|\s+/g) ?? []) {
          if (longest(plain(run)) <= limit) pieces.push(piece(plain(run)));
          else for (const chunk of hardChunks(run, (text) => longest(plain(text)), limit)) pieces.push(piece(plain(chunk)));
        }
      }
    }
  }
  return pieces;
}

/** Slices of `text` whose rendering fits; escaping may lengthen a slice, so each is measured. */
function hardChunks(text: string, measure: (text: string) => number, limit: number): string[] {
  const chunks: string[] = [];
  let rest = text;
  while (rest.length > 0) {
    let size = Math.min(rest.length, limit);
    while (size > 1 && measure(rest.slice(0, size)) > limit) size = Math.floor(size / 2);
    size = safeCutIndex(rest, size);
    chunks.push(rest.slice(0, size));
    rest = rest.slice(size);
  }
  return chunks;
}

/** Greedy: each part takes as many whole pieces as fit in every rendering. */
function pack(pieces: Piece[], renderingCount: number, limit: number): string[][] {
  const parts: string[][] = [];
  let current: string[] | undefined;
  for (const next of pieces) {
    const joined = current?.map((text, i) => text + next.sep + (next.renderings[i] ?? ''));
    if (joined && longest(joined.map((text) => text.trimEnd())) <= limit) {
      current = joined;
      continue;
    }
    if (current) parts.push(current.map((text) => text.trim()));
    current = next.renderings.slice(0, renderingCount);
  }
  if (current) parts.push(current.map((text) => text.trim()));
  return parts.filter((part) => part.some((text) => text !== ''));
}
