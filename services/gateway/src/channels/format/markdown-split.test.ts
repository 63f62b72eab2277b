import { MAX_INLINE_RUN } from './markdown-render';
import { formatParts } from './markdown-split';
import { plainMarkup, telegramHtml, whatsappMarkup } from './markup';

const paragraph = (n: number, word: string) => Array.from({ length: n }, (_, i) => `${word}${i}`).join(' ');

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('formatParts', () => {
  it('never cuts an emoji in half in a run too long for one message (WhatsApp, Telegram plain)', () => {
    const run = '😀'.repeat(300);
    const parts = formatParts(`a few words ${run}`, [whatsappMarkup, plainMarkup], 101);
    for (const part of parts) for (const text of part) expect(LONE_SURROGATE.test(text) || text.length > 101).toBe(false);
    expect(parts.map(([text]) => text).join('')).toBe(`a few words${run}`);
  });

  it('never cuts through an emoji made of several characters (skin tone, family, keycap)', () => {
    for (const emoji of ['👍🏽', '👨‍👩‍👧', '1️⃣']) {
      const parts = formatParts(emoji.repeat(300), [telegramHtml, plainMarkup], 101);
      for (const part of parts) for (const text of part) expect(text.split(emoji).join('')).toBe('');
    }
  });

  it('keeps a short answer in one part', () => {
    expect(formatParts('Hello **you**', [telegramHtml, plainMarkup], 100)).toEqual([['Hello <b>you</b>', 'Hello you']]);
  });

  it('cuts between paragraphs first, never inside a block that fits', () => {
    const first = paragraph(10, 'a');
    const code = '```\n' + paragraph(8, 'c') + '\n```';
    const parts = formatParts(`${first}\n\n${code}\n\nlast`, [telegramHtml], 60).map(([html]) => html);
    expect(parts).toEqual([first, `<pre><code>${paragraph(8, 'c')}</code></pre>\n\nlast`]);
  });

  it('cuts a long paragraph between lines, then between words, each part under the limit', () => {
    const text = `${paragraph(30, 'line')}\n${paragraph(30, 'next')} **bold end**`;
    const parts = formatParts(text, [telegramHtml, plainMarkup], 100);
    for (const [html, plain] of parts) {
      expect((html ?? '').length).toBeLessThanOrEqual(100);
      expect((plain ?? '').length).toBeLessThanOrEqual(100);
    }
    const plain = parts.map(([, p]) => p).join(' ');
    expect(plain.replace(/\s+/g, ' ')).toBe(text.replace('**bold end**', 'bold end').replace(/\s+/g, ' '));
    expect(parts[parts.length - 1]?.[0]).toMatch(/<b>bold end<\/b>$/);
  });

  it('splits a code block too long for one message into closed code blocks', () => {
    const lines = Array.from({ length: 40 }, (_, i) => `const v${i} = ${i} < 1;`);
    const parts = formatParts('```js\n' + lines.join('\n') + '\n```', [telegramHtml], 300).map(([html]) => html ?? '');
    expect(parts.length).toBeGreaterThan(1);
    for (const part of parts) {
      expect(part.length).toBeLessThanOrEqual(300);
      expect(part).toMatch(/^<pre><code class="language-js">[^]*<\/code><\/pre>$/);
    }
    expect(
      parts
        .join('\n')
        .replace(/<[^>]+>/g, '')
        .replace(/&lt;/g, '<')
        .split('\n'),
    ).toEqual(lines);
  });

  it('cuts a quote or a list too long for one message between its blocks, a code block in them staying code', () => {
    const code = Array.from({ length: 30 }, (_, i) => `const v${i} = ${i} < 1;`);
    const quote = ['> intro', '>', '> ```js', ...code.map((line) => `> ${line}`), '> ```'].join('\n');
    const list = ['1. first', '2. second', '', '   ```js', ...code.map((line) => `   ${line}`), '   ```', '3. third'].join('\n');
    for (const markdown of [quote, list]) {
      const parts = formatParts(markdown, [telegramHtml], 200).map(([html]) => html ?? '');
      const blocks = parts.flatMap((part) => part.match(/<pre><code class="language-js">[^<]+<\/code><\/pre>/g) ?? []);
      for (const part of parts) expect(part.length).toBeLessThanOrEqual(200);
      expect(
        blocks
          .join('\n')
          .replace(/<[^>]+>/g, '')
          .replace(/&lt;/g, '<')
          .split('\n')
          .map((line) => line.trim()),
      ).toEqual(code);
      expect(parts.map((part) => part.replace(/<pre>[^]*?<\/pre>/g, '')).join('\n')).not.toMatch(/const|```/);
    }
    expect(formatParts(list, [telegramHtml], 200).flat().join('\n')).toMatch(/^1\. first\n2\. second[^]*\n3\. third$/);
    expect(
      formatParts(quote, [telegramHtml], 200)
        .flat()
        .every((part) => /^<blockquote>[^]*<\/blockquote>$/.test(part)),
    ).toBe(true);
  });

  it('cuts a bold run longer than a message between its words, never inside one', () => {
    const words = paragraph(60, 'word');
    const parts = formatParts(`**${words}**`, [telegramHtml, plainMarkup], 100);
    for (const [html, plain] of parts) {
      expect((html ?? '').length).toBeLessThanOrEqual(100);
      expect(plain).toMatch(/^(\*\*)?word\d+( word\d+)*(\*\*)?$/);
    }
    expect(parts.map(([, plain]) => plain).join(' ')).toBe(`**${words}**`);
  });

  it('fills each part of a word that escaping lengthens, rather than halving it', () => {
    const word = 'x'.repeat(3_000) + '&'.repeat(1_000);
    const parts = formatParts(word, [telegramHtml, plainMarkup], 4_000);
    expect(parts.map(([html]) => html?.length)).toEqual([4_000, 4_000]);
    expect(parts.map(([, plain]) => plain).join('')).toBe(word);
  });

  it('cuts a word longer than a message', () => {
    const parts = formatParts('x'.repeat(250), [telegramHtml], 100).map(([html]) => html);
    expect(parts).toEqual(['x'.repeat(100), 'x'.repeat(100), 'x'.repeat(50)]);
  });

  it('keeps an inline run longer than MAX_INLINE_RUN as plain text, a nested one too', () => {
    // marked's inline lexer takes time quadratic in a run's length on crafted emphasis ('*a*a…'):
    // a model's answer of 64,000 such characters held the gateway for 5-20 s.
    const run = '*a'.repeat(MAX_INLINE_RUN / 2 + 1);
    expect(formatParts(`_a_ b\n\n${run}`, [telegramHtml], 4_000).flat().join('')).toBe(`<i>a</i> b${run}`);
    expect(formatParts(`> ${run}`, [plainMarkup], 10_000).flat().join('')).toContain(run);
  });
});
