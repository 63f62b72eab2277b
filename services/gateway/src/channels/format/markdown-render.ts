import { Lexer, type Token, type Tokens } from 'marked';
import type { Markup } from './markup';

/**
 * An inline run (a paragraph's text, a heading, a table cell) longer than this stays plain text:
 * marked's inline lexer takes time quadratic in a run's length on crafted emphasis (an answer of
 * 64,000 characters of "_a" held the gateway for seconds), and a run longer than a chat message
 * has no formatting worth that.
 */
export const MAX_INLINE_RUN = 4_000;

/** marked's lexer with MAX_INLINE_RUN applied to every inline run, nested ones included. */
function boundedLexer(): Lexer {
  const lexer = new Lexer({ gfm: true });
  const lexInline = lexer.inlineTokens.bind(lexer);
  lexer.inlineTokens = (src: string, tokens: Token[] = []) => {
    if (src.length <= MAX_INLINE_RUN) return lexInline(src, tokens);
    tokens.push({ type: 'text', raw: src, text: src });
    return tokens;
  };
  return lexer;
}

/** The top-level blocks of a Markdown text (blank space between them dropped). */
export function markdownBlocks(markdown: string): Token[] {
  return boundedLexer()
    .lex(markdown)
    .filter((token) => token.type !== 'space' && token.type !== 'def');
}

/** The inline tokens of one line. */
export function inlineTokens(line: string): Token[] {
  return boundedLexer().inlineTokens(line);
}

/** Markdown rendered in a chat's dialect: parsed, never rewritten with regular expressions. */
export function renderMarkdown(markdown: string, markup: Markup): string {
  return renderBlocks(markdownBlocks(markdown), markup);
}

export function renderBlocks(tokens: Token[], markup: Markup): string {
  return tokens
    .filter((token) => token.type !== 'space' && token.type !== 'def')
    .map((token) => renderBlock(token, markup))
    .join('\n\n');
}

export function renderBlock(token: Token, markup: Markup): string {
  const t = token as Tokens.Generic;
  switch (token.type) {
    case 'paragraph':
    case 'text':
      return t.tokens ? renderInline(t.tokens, markup) : markup.text(String(t.text));
    case 'heading':
      return markup.bold(renderInline((token as Tokens.Heading).tokens, markup, true));
    case 'code':
      return markup.pre((token as Tokens.Code).text, (token as Tokens.Code).lang ?? '');
    case 'blockquote':
      return markup.quote(renderBlocks((token as Tokens.Blockquote).tokens, markup));
    case 'list':
      return renderList(token as Tokens.List, markup);
    case 'hr':
      return '———';
    case 'table':
      // Chats have no tables: the source keeps its columns readable in monospace.
      return markup.pre(token.raw.trim(), '');
    default:
      return markup.text(token.raw.trim());
  }
}

function renderList(list: Tokens.List, markup: Markup): string {
  return list.items.map((item, index) => listItem(bulletOf(list, index), renderItemBody(item, markup))).join('\n');
}

/** What starts a list's item: its number or bullet, and its box if it is a task. */
export function bulletOf(list: Tokens.List, index: number): string {
  const start = typeof list.start === 'number' ? list.start : 1;
  const item = list.items[index];
  const box = item?.task ? (item.checked ? '☑ ' : '☐ ') : '';
  return `${list.ordered ? `${start + index}. ` : '• '}${box}`;
}

/** Continuation lines (nested lists, later paragraphs) sit under the item's text. */
export const LIST_INDENT = '   ';

export function listItem(bullet: string, body: string): string {
  return `${bullet}${body.split('\n').join(`\n${LIST_INDENT}`)}`;
}

function renderItemBody(item: Tokens.ListItem, markup: Markup): string {
  return item.tokens.map((child) => renderBlock(child, markup)).join(item.loose ? '\n\n' : '\n');
}

/** `bold`: inside a bold run (a heading, `**…**`), where a bold run of its own is already bold: `### **Step 1:** do` is one. */
function renderInline(tokens: Token[], markup: Markup, bold = false): string {
  return tokens
    .map((token, index) => (insideWord(tokens, index) ? markup.text(token.raw) : renderInlineToken(token, markup, bold)))
    .join('');
}

const WORD_END = /[\p{L}\p{N}]$/u;
const WORD_START = /^[\p{L}\p{N}]/u;

/**
 * `2*3*4`, `x*y*z`: asterisks with a letter or digit on both sides are a product, not emphasis
 * (CommonMark makes them italic), as `snake_case` underscores already stay themselves.
 */
function insideWord(tokens: Token[], index: number): boolean {
  const token = tokens[index];
  if (!token || (token.type !== 'em' && token.type !== 'strong') || !token.raw.startsWith('*')) return false;
  return WORD_END.test(tokens[index - 1]?.raw ?? '') && WORD_START.test(tokens[index + 1]?.raw ?? '');
}

function renderInlineToken(token: Token, markup: Markup, bold: boolean): string {
  switch (token.type) {
    case 'text': {
      const text = token as Tokens.Text;
      return text.tokens ? renderInline(text.tokens, markup, bold) : markup.text(text.text);
    }
    case 'escape':
      return markup.text((token as Tokens.Escape).text);
    case 'strong': {
      const inner = renderInline((token as Tokens.Strong).tokens, markup, true);
      return bold ? inner : markup.bold(inner);
    }
    case 'em':
      return markup.italic(renderInline((token as Tokens.Em).tokens, markup, bold));
    case 'del':
      return markup.strike(renderInline((token as Tokens.Del).tokens, markup, bold));
    case 'codespan':
      return markup.code((token as Tokens.Codespan).text);
    case 'br':
      return '\n';
    case 'link': {
      const link = token as Tokens.Link;
      return markup.link(renderInline(link.tokens, markup, bold), link.href, link.text);
    }
    case 'image': {
      const image = token as Tokens.Image;
      const label = image.text || image.href;
      return markup.link(markup.text(label), image.href, label);
    }
    default:
      return markup.text(token.raw);
  }
}
