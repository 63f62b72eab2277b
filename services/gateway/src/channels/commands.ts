import { nameKey } from '@assistant/shared';

export type ChannelCommand = { kind: 'link'; code: string } | { kind: 'new' };

/**
 * `/link CODE` and `/new`, also as Telegram writes them from its command menu, `/link@bot CODE`:
 * in a private chat the suffix can only name this bot, and a group's message for another bot
 * never gets here (telegram.inbound.ts).
 */
export function parseCommand(text: string): ChannelCommand | undefined {
  const link = /^\/link(?:@\w+)?(?:\s+(.*))?$/is.exec(text.trim());
  if (link) return { kind: 'link', code: (link[1] ?? '').replace(/[\s-]/g, '').toUpperCase() };
  if (/^\/new(?:@\w+)?$/i.test(text.trim())) return { kind: 'new' };
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
