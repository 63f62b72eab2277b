import { renderMarkdown } from './markdown-render';
import { plainMarkup, telegramHtml, whatsappMarkup } from './markup';

const ANSWER = [
  '## Plan',
  'Compare **a < b & c > d**, _really_ and ~~never~~ `x<y>`; see [the docs](https://example.com/?a=1&b="2").',
  '```ts\nif (a < b && c > d) return "<b>";\n```',
  '1. first\n2. second',
  '- [x] done',
  'Raw <script>alert(1)</script> & [bad](javascript:alert(1))',
].join('\n\n');

describe('renderMarkdown', () => {
  it('converts Markdown to Telegram HTML and escapes every other <, > and &', () => {
    expect(renderMarkdown(ANSWER, telegramHtml)).toBe(
      [
        '<b>Plan</b>',
        'Compare <b>a &lt; b &amp; c &gt; d</b>, <i>really</i> and <s>never</s> <code>x&lt;y&gt;</code>; see <a href="https://example.com/?a=1&amp;b=&quot;2&quot;">the docs</a>.',
        '<pre><code class="language-ts">if (a &lt; b &amp;&amp; c &gt; d) return "&lt;b&gt;";</code></pre>',
        '1. first\n2. second',
        '• ☑ done',
        'Raw &lt;script&gt;alert(1)&lt;/script&gt; &amp; bad (javascript:alert(1))',
      ].join('\n\n'),
    );
  });

  it('writes WhatsApp markup', () => {
    expect(renderMarkdown('**bold** and *it* ~~gone~~ `code` [site](https://e.com)\n\n```\nx = 1\n```', whatsappMarkup)).toBe(
      '*bold* and _it_ ~gone~ `code` site (https://e.com)\n\n```\nx = 1\n```',
    );
  });

  it('leaves an e-mail address as written, where only Telegram links it', () => {
    const text = 'Write to help@example.com or [me](mailto:me@example.com).';
    expect(renderMarkdown(text, whatsappMarkup)).toBe('Write to help@example.com or me (mailto:me@example.com).');
    expect(renderMarkdown(text, plainMarkup)).toBe('Write to help@example.com or me (mailto:me@example.com).');
    expect(renderMarkdown(text, telegramHtml)).toBe(
      'Write to <a href="mailto:help@example.com">help@example.com</a> or <a href="mailto:me@example.com">me</a>.',
    );
  });

  it('leaves a bare www. address as written, where only Telegram links it', () => {
    const text = 'See www.example.com/docs today.';
    expect(renderMarkdown(text, whatsappMarkup)).toBe(text);
    expect(renderMarkdown(text, plainMarkup)).toBe(text);
    expect(renderMarkdown(text, telegramHtml)).toBe('See <a href="http://www.example.com/docs">www.example.com/docs</a> today.');
  });

  it('keeps asterisks inside a word as written: a product is not emphasis', () => {
    for (const markup of [telegramHtml, whatsappMarkup, plainMarkup]) {
      expect(renderMarkdown('2*3*4 = 24, a*b*c and snake_case_words', markup)).toBe('2*3*4 = 24, a*b*c and snake_case_words');
    }
    expect(renderMarkdown('a *word* and **bold**!', telegramHtml)).toBe('a <i>word</i> and <b>bold</b>!');
  });

  it('writes a bold run inside a heading or a bold run once: WhatsApp shows no stray asterisks', () => {
    const text = '### **Step 1:** open it\n\n**all _of_ **this** bold**';
    expect(renderMarkdown(text, whatsappMarkup)).toBe('*Step 1: open it*\n\n*all _of_ this bold*');
    expect(renderMarkdown(text, telegramHtml)).toBe('<b>Step 1: open it</b>\n\n<b>all <i>of</i> this bold</b>');
  });

  it('never nests a quote in a quote for Telegram, whose formatting rules allow no nested blockquotes', () => {
    expect(renderMarkdown('> said:\n> > <quoted>', telegramHtml)).toBe('<blockquote>said:\n\n&lt;quoted&gt;</blockquote>');
  });

  it('drops all markup for the plain resend', () => {
    expect(renderMarkdown('**a** <b> [x](https://e.com) https://e.com', plainMarkup)).toBe('a <b> x (https://e.com) https://e.com');
  });
});
