import { nameKey } from '@assistant/shared';

export type ChannelCommand = { kind: 'link'; code: string } | { kind: 'new' };

/** `/link CODE` and `/new` (a Telegram `@bot` suffix is removed before this). */
export function parseCommand(text: string): ChannelCommand | undefined {
  const link = /^\/link(?:\s+(.*))?$/is.exec(text.trim());
  if (link) return { kind: 'link', code: (link[1] ?? '').replace(/[\s-]/g, '').toUpperCase() };
  if (/^\/new$/i.test(text.trim())) return { kind: 'new' };
  return undefined;
}

const YES = new Set(['yes', 'sim']);
const NO = new Set(['no', 'nao']);

/** A plain "yes"/"no"/"sim"/"não" (any case or accents, trailing punctuation allowed), else undefined. */
export function parseYesNo(text: string): boolean | undefined {
  const word = nameKey(text).replace(/[.!]+$/, '');
  if (YES.has(word)) return true;
  if (NO.has(word)) return false;
  return undefined;
}
