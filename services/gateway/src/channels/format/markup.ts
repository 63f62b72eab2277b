/**
 * How one chat dialect writes the few things a model's Markdown carries. The renderer walks the
 * Markdown syntax tree and asks a Markup for each piece, so escaping happens once, on text
 * only, and never on markup the renderer itself produced.
 */
export interface Markup {
  /** Literal text as the chat must receive it to display it unchanged. */
  text(value: string): string;
  bold(inner: string): string;
  italic(inner: string): string;
  strike(inner: string): string;
  code(value: string): string;
  /** A code block; `lang` is the fence's info string, maybe empty. */
  pre(value: string, lang: string): string;
  /** `inner` is already rendered; `href` is the raw target. */
  link(inner: string, href: string, label: string): string;
  quote(inner: string): string;
}

/** Telegram's HTML parse mode: only `&`, `<` and `>` need escaping in text (and `"` in attributes). */
export function escapeHtml(value: string): string {
  return value.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}

/** Links Telegram opens; anything else (javascript:, relative paths) is shown as text. */
const SAFE_LINK = /^(https?:\/\/|tg:\/\/|mailto:)/i;

export const telegramHtml: Markup = {
  text: escapeHtml,
  bold: (inner) => `<b>${inner}</b>`,
  italic: (inner) => `<i>${inner}</i>`,
  strike: (inner) => `<s>${inner}</s>`,
  code: (value) => `<code>${escapeHtml(value)}</code>`,
  pre: (value, lang) => {
    const language = /^[\w+#.-]{1,30}$/.test(lang) ? ` class="language-${lang}"` : '';
    return `<pre><code${language}>${escapeHtml(value)}</code></pre>`;
  },
  link: (inner, href, label) => {
    if (!SAFE_LINK.test(href)) return label === href ? escapeHtml(href) : `${inner} (${escapeHtml(href)})`;
    return `<a href="${escapeHtml(href).replace(/"/g, '&quot;')}">${inner}</a>`;
  },
  // Telegram nests no quotes: a quote inside one is part of it (text is escaped, so these tags are ours).
  quote: (inner) => `<blockquote>${inner.replace(/<\/?blockquote>/g, '')}</blockquote>`,
};

/** Text with the target after it, unless the text already says it: a bare URL, a `www.` address or an e-mail address (autolinked as `http://`, `mailto:`). */
const spelledLink = (inner: string, href: string, label: string) =>
  label === href || href === `mailto:${label}` || href === `http://${label}` ? label : `${inner} (${href})`;
const quoteLines = (inner: string) =>
  inner
    .split('\n')
    .map((line) => `> ${line}`)
    .join('\n');

/** WhatsApp's own markup: `*bold*`, `_italic_`, `~strike~`, `` `code` ``, ``` fences ```; no escaping exists. */
export const whatsappMarkup: Markup = {
  text: (value) => value,
  bold: (inner) => `*${inner}*`,
  italic: (inner) => `_${inner}_`,
  strike: (inner) => `~${inner}~`,
  code: (value) => `\`${value}\``,
  pre: (value) => `\`\`\`\n${value}\n\`\`\``,
  link: spelledLink,
  quote: quoteLines,
};

/** What Telegram gets when it refuses a part's entities: the same words, no markup at all. */
export const plainMarkup: Markup = {
  text: (value) => value,
  bold: (inner) => inner,
  italic: (inner) => inner,
  strike: (inner) => inner,
  code: (value) => value,
  pre: (value) => value,
  link: spelledLink,
  quote: quoteLines,
};
