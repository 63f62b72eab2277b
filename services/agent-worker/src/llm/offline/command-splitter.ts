import { startsCommand } from './command-table';
import { foldedLine, skip, skipBack, sliceText, type FoldedText } from './folded-text';

/*
 * Cuts a message into one text per command, in one pass: every character is looked at a bounded
 * number of times, so a 16,000-character message costs no more than a few short ones (docs/agent.md#offline-planner).
 * Lines and ";" always separate; ",", " and " / " e " (and their "then" forms) separate only where
 * a command begins right after, so names such as "yoga e meditação" or "rock and roll" survive.
 */

const LINE_BREAK = /\r\n|[\n\r\u2028\u2029]/;
// A comma or a joining word: "create folder Work, list habits", "criar pasta A e depois listar
// hábitos", "create folder Work then list habits". The look-behind starts a match only at the first
// space or comma of a run: otherwise every one of a long run would rescan the rest of it.
const JOINING = '(?:and then|and|then|e depois|e|depois)';
const AND = new RegExp(String.raw`(?<![\s,])(?:\s*,\s*(?:${JOINING}\s+)?|\s+${JOINING}\s+)`, 'g');
// Folded, longest first where one begins another: "could you please", "você pode, por favor,".
const OPENINGS = [
  'please',
  'pls',
  'plz',
  'kindly',
  'can you',
  'can u',
  'could you',
  'would you',
  'will you',
  'por favor',
  'por gentileza',
  'voce pode',
  'voce poderia',
  'pode',
  'poderia',
  // Greetings and wishes: "hey, create folder Work", "quero criar uma pasta".
  'hi',
  'hello',
  'hey',
  'ok',
  'okay',
  'oi',
  'ola',
  'bom dia',
  'boa tarde',
  'boa noite',
  'i want to',
  'i would like to',
  "i'd like to",
  'i need to',
  'eu quero',
  'quero',
  'queria',
  'gostaria de',
  'eu preciso',
  'preciso',
];
const CLOSINGS = ['please', 'pls', 'plz', 'por favor'];
// Thanks end a command only after a comma or a mark, so "create folder Thanks" keeps its name.
const THANKS = /[,.!]\s*(?:thanks|thank you|thx|ty|obrigad[oa]|valeu|vlw)$/;
const endsWord = (key: string, at: number) => !/[\p{L}\p{N}]/u.test(key.charAt(at));
// Emoticons are decoration like emoji: "create folder Work ;)". Each is a word of its own, but a
// smile may touch the word before it ("Work;)"). Sticky, tried at one index, so trimming a run of
// them stays linear.
const EMOTICON = /(?:[:;=]['-]?[)(\][dpo*|/\\]|xd|x\)|<3|\^_?\^)(?![\p{L}\p{N}])/uy;
const SMILE = /[:;=]['-]?[)(]$/;
// The ";" of ";)" or ";p" separates nothing.
const WINK = /;-?[)(dp](?![\p{L}\p{N}])/uy;

export function splitCommands(message: string): FoldedText[] {
  const pieces: FoldedText[] = [];
  for (const line of message.replace(/^\s*@\S+/, '').split(LINE_BREAK)) {
    const text = foldedLine(line);
    let from = 0;
    // Quoted values are masked in the key, so a ";" inside quotes is no separator.
    for (let end = nextSemicolon(text.key, from); from <= text.key.length; end = nextSemicolon(text.key, from)) {
      const chunkEnd = end === -1 ? text.key.length : end;
      const chunk = sliceText(text, from, chunkEnd);
      if (chunk.key.trim() !== '') pieces.push(...splitChain(chunk));
      from = chunkEnd + 1;
    }
  }
  return pieces;
}

/** Index of the next ";" that separates commands, from `from` on; -1 for none. */
function nextSemicolon(key: string, from: number): number {
  for (let at = key.indexOf(';', from); at !== -1; at = key.indexOf(';', at + 1)) {
    WINK.lastIndex = at;
    if (!WINK.test(key)) return at;
  }
  return -1;
}

/** The length of the emoticon that starts at `at` of the key and ends a word there, 0 for none. */
function emoticonAt(key: string, at: number): number {
  EMOTICON.lastIndex = at;
  return EMOTICON.exec(key)?.[0].length ?? 0;
}

/** The length of the emoticon that ends at `end`, standing alone or a smile after a word, 0 for none. */
function emoticonBefore(key: string, end: number): number {
  for (let length = 2; length <= 4 && length <= end; length++) {
    const at = end - length;
    if (emoticonAt(key, at) !== length) continue;
    if (at === 0 || /\s/.test(key.charAt(at - 1)) || SMILE.test(key.slice(at, end))) return length;
  }
  return 0;
}

/** The commands of a chunk, each without its polite words; "Please, create folder A" is one. */
function splitChain(chunk: FoldedText): FoldedText[] {
  const pieces: FoldedText[] = [];
  let from = 0;
  for (const cut of chunk.key.matchAll(AND)) {
    const next = cut.index + cut[0].length;
    if (!startsCommand(chunk.key, next)) continue;
    const piece = withoutCourtesy(sliceText(chunk, from, cut.index));
    if (piece.key === '') continue;
    pieces.push(piece);
    from = next;
  }
  pieces.push(withoutCourtesy(sliceText(chunk, from, chunk.key.length)));
  return pieces;
}

/**
 * Without surrounding spaces, the polite words before it ("please", "can you", "você pode, por
 * favor,"), a trailing "please" / "por favor", and closing punctuation.
 */
function withoutCourtesy(piece: FoldedText): FoldedText {
  const key = piece.key;
  let start = skip(key, 0, '');
  for (;;) {
    const opening = OPENINGS.find((words) => key.startsWith(words, start) && endsWord(key, start + words.length));
    const length = opening?.length ?? emoticonAt(key, start);
    if (length === 0) break;
    start = skip(key, start + length, ',!.');
  }
  let end = skipBack(key, key.length, '.!?…');
  // The thanks are at most a few words: the pattern runs on the end of the key only.
  const thanks = THANKS.exec(key.slice(Math.max(start, end - 16), end));
  if (thanks) end = skipBack(key, end - thanks[0].length + 1, '.!?…');
  for (let length = emoticonBefore(key, end); length > 0 && end - length >= start; length = emoticonBefore(key, end)) {
    end = skipBack(key, end - length, '.!?…');
  }
  const closing = CLOSINGS.find((word) => key.endsWith(word, end) && end - word.length > start && endsWord(key, end - word.length - 1));
  if (closing) end -= closing.length;
  end = skipBack(key, end, ',');
  return sliceText(piece, start, Math.max(start, end));
}
