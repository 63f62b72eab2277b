import { en, type Chrono, type Parser } from 'chrono-node';

// After a letter or digit a match would cut a word in two.
const START = String.raw`(?<![\p{L}\p{N}])`;
const END = String.raw`(?![\p{L}\p{N}])`;

const HOUR_WORDS: Record<string, number> = {
  one: 1,
  two: 2,
  three: 3,
  four: 4,
  five: 5,
  six: 6,
  seven: 7,
  eight: 8,
  nine: 9,
  ten: 10,
  eleven: 11,
  twelve: 12,
};
const HOUR = `([01]?\\d|2[0-3]|${Object.keys(HOUR_WORDS).join('|')})`;

/** "half past 8", "at quarter past nine", "a quarter to 7 pm": chrono reads none of them. */
const pastAndTo: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?:at\s+)?(?:(half|(?:a\s+)?quarter)\s+past|(?:a\s+)?quarter\s+(to))\s+${HOUR}(?:\s*([ap])\.?m\.?)?${END}`,
      'iu',
    ),
  extract: (_context, match) => {
    const said = (match[3] ?? '').toLowerCase();
    let hour = HOUR_WORDS[said] ?? Number(said);
    const meridiem = (match[4] ?? '').toLowerCase();
    if (meridiem && hour > 12) return null;
    if (meridiem === 'p' && hour < 12) hour += 12;
    if (meridiem === 'a' && hour === 12) hour = 0;
    if (match[2]) return { hour: (hour + 23) % 24, minute: 45 };
    return { hour, minute: (match[1] ?? '').toLowerCase() === 'half' ? 30 : 15 };
  },
};

/**
 * chrono's casual English without "3 days ago" and "3 days later", and with the forms above: no
 * reminder is set in the past or counted from another date, and their regular expressions take V8
 * about a second to compile on first use, which would stall the first reminder a worker plans.
 */
export function englishTimeParser(): Chrono {
  const parser = en.casual.clone();
  parser.parsers = parser.parsers.filter((one) => !/(?:Ago|Later)FormatParser$/.test(one.constructor.name));
  parser.parsers.push(pastAndTo);
  return parser;
}
