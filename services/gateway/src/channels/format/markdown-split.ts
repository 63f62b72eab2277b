import type { Token, Tokens } from 'marked';
import { safeCutIndex } from '@assistant/shared';
import { bulletOf, inlineTokens, LIST_INDENT, listItem, markdownBlocks, renderBlock, renderMarkdown } from './markdown-render';
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
  return pack(fitBlocks(markdownBlocks(markdown), markups, limit, bare), markups, limit, bare).map((part) => part.renderings);
}

/**
 * What encloses the pieces of a block inside a quote or a list item, `first` for its first piece
 * (which takes the item's bullet): applied to each piece and measured with it, so a piece of a
 * long quote is a whole quote of its own, valid by itself.
 */
type Wrap = (text: string, markup: Markup, first: boolean) => string;
const bare: Wrap = (text) => text;

function piece(renderings: string[], sep = ''): Piece {
  return { renderings, sep };
}

const longest = (renderings: string[]) => Math.max(...renderings.map((text) => text.length));

/** The first piece of a group takes the separator that precedes the group. */
function separated(pieces: Piece[], sep: string): Piece[] {
  const [first, ...rest] = pieces;
  return first ? [{ ...first, sep }, ...rest] : [];
}

function fitBlocks(blocks: Token[], markups: readonly Markup[], limit: number, wrap: Wrap, sep = '\n\n'): Piece[] {
  return blocks
    .filter((block) => block.type !== 'space' && block.type !== 'def')
    .flatMap((block, index) => {
      const inner: Wrap = (text, markup, first) => wrap(text, markup, first && index === 0);
      return separated(fitBlock(block, markups, limit, inner), sep);
    });
}

function fitBlock(block: Token, markups: readonly Markup[], limit: number, wrap: Wrap): Piece[] {
  const whole = markups.map((markup) => wrap(renderBlock(block, markup), markup, true));
  if (longest(whole) <= limit) return [piece(whole)];
  if (block.type === 'code') return fitCode(block as Tokens.Code, markups, limit, wrap);
  // A quote's or a list's own blocks, each cut as it would be outside it: a code block in them stays a code block.
  if (block.type === 'blockquote') {
    const quoted: Wrap = (text, markup, first) => wrap(markup.quote(text), markup, first);
    return fitBlocks((block as Tokens.Blockquote).tokens, markups, limit, quoted);
  }
  if (block.type === 'list') return fitList(block as Tokens.List, markups, limit, wrap);
  // Lines and words are cut bare, leaving room for what wraps one line, then regrouped inside it.
  const room = limit - Math.max(...markups.map((markup) => Math.max(wrap('', markup, true).length, wrap('', markup, false).length)));
  const pieces: Piece[] = [];
  let sep = '';
  for (const line of block.raw.replace(/\n+$/, '').split('\n')) {
    if (line.trim() === '') {
      sep = '\n\n';
      continue;
    }
    pieces.push(...separated(fitLine(line, markups, room), sep));
    sep = '\n';
  }
  return wrap === bare ? pieces : pack(pieces, markups, limit, wrap);
}

/** A list too long for one message, cut between its items; an item too long, between its blocks, the first under its bullet. */
function fitList(list: Tokens.List, markups: readonly Markup[], limit: number, wrap: Wrap): Piece[] {
  return list.items.flatMap((item, index) => {
    const one = { ...list, items: [item], start: typeof list.start === 'number' ? list.start + index : list.start };
    const whole = markups.map((markup) => wrap(renderBlock(one, markup), markup, index === 0));
    if (longest(whole) <= limit) return [piece(whole, '\n')];
    const bullet = bulletOf(one, 0);
    const under: Wrap = (text, markup, first) => wrap(listItem(first ? bullet : LIST_INDENT, text), markup, first && index === 0);
    return separated(fitBlocks(item.tokens, markups, limit, under, item.loose ? '\n\n' : '\n'), '\n');
  });
}

/** A code block too long for one message becomes several blocks, cut between lines. */
function fitCode(code: Tokens.Code, markups: readonly Markup[], limit: number, wrap: Wrap): Piece[] {
  const lang = code.lang ?? '';
  const render = (text: string) => markups.map((markup) => wrap(markup.pre(text, lang), markup, pieces.length === 0));
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
    // The longest slice that fits: escaping lengthens some characters, so it may be shorter than the limit.
    let size = Math.min(rest.length, limit);
    if (measure(rest.slice(0, size)) > limit) {
      let fits = 1;
      while (fits < size - 1) {
        const middle = Math.floor((fits + size) / 2);
        if (measure(rest.slice(0, middle)) <= limit) fits = middle;
        else size = middle;
      }
      size = fits;
    }
    size = safeCutIndex(rest, size);
    chunks.push(rest.slice(0, size));
    rest = rest.slice(size);
  }
  return chunks;
}

/**
 * Greedy: each part takes as many whole pieces as fit in every rendering, once wrapped (the first
 * part as the first piece). A part that starts inside a line starts a line of its own.
 */
function pack(pieces: Piece[], markups: readonly Markup[], limit: number, wrap: Wrap): Piece[] {
  const parts: Piece[] = [];
  const wrapped = (texts: string[]) => markups.map((markup, i) => wrap((texts[i] ?? '').trim(), markup, parts.length === 0));
  let current: Piece | undefined;
  const close = (part: Piece) => {
    if (part.renderings.some((text) => text.trim() !== '')) parts.push(piece(wrapped(part.renderings), part.sep || '\n'));
  };
  for (const next of pieces) {
    const joined = current?.renderings.map((text, i) => text + next.sep + (next.renderings[i] ?? ''));
    if (current && joined && longest(wrapped(joined)) <= limit) {
      current = piece(joined, current.sep);
      continue;
    }
    if (current) close(current);
    current = piece(next.renderings.slice(0, markups.length), next.sep);
  }
  if (current) close(current);
  return parts;
}
