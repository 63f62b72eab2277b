import { en, Meridiem, ParsingComponents, type Chrono, type Parser } from 'chrono-node';

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

const MINUTE_WORDS: Record<string, number> = { five: 5, ten: 10, quarter: 15, twenty: 20, 'twenty-five': 25, 'twenty five': 25, half: 30 };
const MINUTES = `(?<minutes>${Object.keys(MINUTE_WORDS).join('|')}|[1-9]|[1-5]\\d)`;
// The part of the day after an hour: "in the evening", "at night".
const PART_OF_DAY = String.raw`\s+in\s+the\s+(?<part>morning|afternoon|evening)|\s+at\s+(?<night>night)`;

/**
 * "half past 8", "at quarter past nine", "a quarter to 7 pm", "at twenty past 8", "at 10 minutes to
 * 9", "half past 8 in the evening": chrono reads none of them. Minutes other than half and quarter
 * need "at" before them or "minutes" after, so the counts in "give 2 to 3 people" and "read pages
 * 10 to 20" stay text.
 */
const pastAndTo: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?<at>at\s+)?(?:a\s+)?${MINUTES}(?<unit>\s+minutes?)?\s+(?<relation>past|after|to|till|before)\s+${HOUR}` +
        String.raw`(?:\s*(?<meridiem>[ap])\.?m\.?|${PART_OF_DAY})?${END}`,
      'iu',
    ),
  extract: (_context, match) => {
    const { at, minutes: said = '', unit, relation = '', meridiem, part, night } = match.groups ?? {};
    const minutes = MINUTE_WORDS[said.toLowerCase()] ?? Number(said);
    if (!at && !unit && minutes !== 15 && minutes !== 30) return null;
    const hourSaid = (match[5] ?? '').toLowerCase();
    const hour = HOUR_WORDS[hourSaid] ?? Number(hourSaid);
    const half = (meridiem ?? part ?? night ?? '').toLowerCase();
    if (minutes > 59 || (half && hour > 12)) return null;
    const of = half ? hourOfPart(hour, half) : hour;
    const before = ['to', 'till', 'before'].includes(relation.toLowerCase());
    const time = before ? { hour: (of + 23) % 24, minute: 60 - minutes } : { hour: of, minute: minutes };
    // "am", "pm" or a part of the day says which half of the clock: "half past 8 am" is no evening.
    return half ? { ...time, meridiem: time.hour >= 12 ? Meridiem.PM : Meridiem.AM } : time;
  },
};

/** The hour of "8 in the evening" (20), "3 o'clock pm" (15), "12 at night" (0): the part of the day says which 8 it is. */
function hourOfPart(hour: number, part: string): number {
  if (part === 'a' || part === 'morning') return hour === 12 ? 0 : hour;
  if (part === 'night' && hour === 12) return 0;
  // "2 at night" is 02:00; "11 at night" is 23:00.
  if (part === 'night' && hour < 6) return hour;
  return hour < 12 ? hour + 12 : hour;
}

// Only an hour of a 12-hour clock: a refused match ("13pm") would be tried again from "3pm".
const HOUR_OF_12 = `(1[0-2]|0?[1-9]|${Object.keys(HOUR_WORDS).join('|')})`;

/**
 * "at 3 o'clock pm", "at 3 o'clock in the afternoon", "at 8 in the evening", "at 11 at night":
 * chrono reads the hour but not the part of the day after it (nor "am"/"pm" after "o'clock").
 */
const hourOfDayPart: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?:at\s+)?${HOUR_OF_12}(?::(?<minute>[0-5]\d))?(?:\s+o['’]?\s?clock)?` +
        String.raw`(?:\s*(?<meridiem>[ap])\.?m\.?|${PART_OF_DAY})${END}`,
      'iu',
    ),
  extract: (_context, match) => {
    const { minute = '0', meridiem, part, night } = match.groups ?? {};
    const said = (match[1] ?? '').toLowerCase();
    const hour = HOUR_WORDS[said] ?? Number(said);
    const at = hourOfPart(hour, (meridiem ?? part ?? night ?? '').toLowerCase());
    // The part of the day says which half of the clock: "3 o'clock in the morning" is no afternoon.
    return { hour: at, minute: Number(minute), meridiem: at >= 12 ? Meridiem.PM : Meridiem.AM };
  },
};

const COUNT_WORDS: Record<string, number> = { a: 1, an: 1, one: 1, two: 2, three: 3 };

/** "in an hour and a half", "in 2 hours and a half", "in one and a half hours": chrono drops the half. */
const hoursAndAHalf: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}in\s+(?:(an?|one|two|three|\d{1,2})\s+hours?\s+and\s+a\s+half|(an?|one|two|three|\d{1,2})\s+and\s+a\s+half\s+hours?)${END}`,
      'iu',
    ),
  extract: (context, match) => {
    const said = (match[1] ?? match[2] ?? '').toLowerCase();
    const hours = COUNT_WORDS[said] ?? Number(said);
    return ParsingComponents.createRelativeFromReference(context.reference, { hour: hours, minute: 30 });
  },
};

/** "at three o'clock": chrono reads "o'clock" after digits only. */
const wordOClock: Parser = {
  pattern: () => new RegExp(String.raw`${START}(?:at\s+)?(${Object.keys(HOUR_WORDS).join('|')})\s+o['’]?\s?clock${END}`, 'iu'),
  extract: (_context, match) => ({ hour: HOUR_WORDS[(match[1] ?? '').toLowerCase()] ?? 0, minute: 0 }),
};

/** "at 15h", "at 15h30": an hour as much of the world writes it; chrono reads "15h" as 15 hours from now. */
const hourWithH: Parser = {
  pattern: () => new RegExp(String.raw`${START}at\s+([01]?\d|2[0-3])h(?:([0-5]\d)(?:min)?)?${END}`, 'iu'),
  extract: (_context, match) => ({ hour: Number(match[1]), minute: Number(match[2] ?? 0) }),
};

/** "the day after tomorrow": chrono reads only the "tomorrow" in it, a day early. */
const dayAfterTomorrow: Parser = {
  pattern: () => new RegExp(String.raw`${START}(?:the\s+)?day\s+after\s+tomorrow${END}`, 'iu'),
  extract: (context) => ParsingComponents.createRelativeFromReference(context.reference, { day: 2 }),
};

/**
 * chrono's casual English without "3 days ago" and "3 days later", and with the forms above: no
 * reminder is set in the past or counted from another date, and their regular expressions take V8
 * about a second to compile on first use, which would stall the first reminder a worker plans.
 */
export function englishTimeParser(): Chrono {
  const parser = en.casual.clone();
  parser.parsers = parser.parsers.filter((one) => !/(?:Ago|Later)FormatParser$/.test(one.constructor.name));
  parser.parsers.push(pastAndTo, hoursAndAHalf, hourOfDayPart, dayAfterTomorrow, hourWithH, wordOClock);
  return parser;
}
