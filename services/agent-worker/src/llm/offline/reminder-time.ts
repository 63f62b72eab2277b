import { Meridiem, ParsingComponents, type Chrono, type ParsedResult } from 'chrono-node';
import { DateTime, IANAZone } from 'luxon';
import { englishTimeParser } from './english-time.parsers';
import { fold, skip, skipBack } from './folded-text';
import { portugueseTimeParser } from './portuguese-time.parsers';
import { timeRangeSpan, type Span } from './time-range';

export type Language = 'en' | 'pt';
export type Repeat = 'daily' | 'weekdays' | 'weekly' | 'monthly';

/** The moment the message is read and the user's IANA zone, in which its times are meant. */
export interface Clock {
  now: Date;
  timezone: string;
}

export interface ReminderRequest {
  text: string;
  /** Local wall-clock time in the user's zone, ISO 8601 without an offset (docs/tools.md#times). */
  at: string;
  repeat?: Repeat;
}

/**
 * A reminder's text is at most 500 characters (its tool refuses more); with its time phrase a
 * longer request cannot be a valid reminder, and the bound keeps chrono's work per message small.
 */
const MAX_CHARS = 1_000;
/** chrono in each language the planner reads, with our added forms; built once (docs/architecture.md). */
export const TIME_PARSERS: Record<Language, Chrono> = { en: englishTimeParser(), pt: portugueseTimeParser() };

const WEEKDAY = 'monday|tuesday|wednesday|thursday|friday|saturday|sunday|segunda|terca|quarta|quinta|sexta|sabado|domingo';
// A weekday in the plural ("on Sundays", "aos domingos", "todas as sextas-feiras") is a weekly
// reminder on that day; chrono reads only the singular, so the plural is rewritten to it.
const PLURAL_WEEKDAYS = '(?:sun|mon|tues|wednes|thurs|fri|satur)days|domingos|sabados|(?:segunda|terca|quarta|quinta|sexta)s(?:-feiras)?';
const SINGULAR: Record<string, string> = { terca: 'terça', sabado: 'sábado' };
const DAY = '(3[01]|[12]\\d|0?[1-9])';
// "dia 5" is a day of the month; "dia 7h" and "dia 7:30" are a time ("todo dia 7h").
const DIA = String.raw`dia ${DAY}(?![\p{L}\p{N}:/])`;
// Runs on folded text (no accents). "every Monday" keeps "Monday" for chrono: it says which day;
// "todo dia 5" (monthly, not daily) keeps "dia 5" for MONTH_DAY.
const REPEATS = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:` +
    String.raw`(?<weekdays>every weekday|on weekdays|weekdays|(?:todo|cada) dia util|todos os dias uteis|(?:nos|em) dias uteis|de segunda a sexta)` +
    String.raw`|(?<daily>every day|each day|everyday|daily|(?:todo|cada) (?!${DIA})dia|todos os dias|diariamente)` +
    String.raw`|(?:(?:every|each|on|todos os|todas as|aos|as|nos|nas|em)\s+)?(?<plural>${PLURAL_WEEKDAYS})` +
    String.raw`|(?<weekday>every|each|toda|todas as|todo|todos os|cada)(?=\s+(?:${WEEKDAY}))` +
    String.raw`|(?<weekly>every week|each week|weekly|toda semana|todas as semanas|cada semana|semanalmente)` +
    String.raw`|(?<monthly>(?:of )?(?:every|each) month|monthly|(?:de )?(?:todo|cada) mes|todos os meses|mensalmente|(?:todo|cada)(?= ${DIA}))` +
    String.raw`)(?![\p{L}\p{N}])`,
  'du',
);
// A repeat a reminder cannot have ("every 8 hours", "every other day", "a cada 2 dias", "de 8 em 8
// horas"): read as a one-off reminder it would fire once, so the request is not understood.
const INTERVAL = new RegExp(
  String.raw`(?<![\p{L}\p{N}])(?:(?:every|each)\s+(?:\d{1,3}|other|two|three|four|five|six|couple|few)` +
    String.raw`|a cada\s+(?:\d{1,3}|dois|duas|tres|quatro|cinco|seis|quinze)|de\s+(\d{1,3}|hora)\s+em\s+\1)(?![\p{L}\p{N}])`,
  'u',
);
// chrono reads no day of the month on its own: "on the 5th (of the month)", "(no) dia 5".
const MONTH_DAY = new RegExp(String.raw`(?<![\p{L}\p{N}])(?:on the ${DAY}(?:st|nd|rd|th)(?: of the month)?(?![\p{L}\p{N}])|${DIA})`, 'u');
// chrono reads two bare numbers as a range of hours; in "give 2 to 3 people" and "read pages 10 to 20"
// they are counts ("from 3 to 4", "3-4pm" and "15h-16h" are still ranges of hours).
const COUNTS = /^\d{1,2}\s*(?:to|till|until|-|–|—)\s*\d{1,2}$/iu;
// "next Monday", "na próxima segunda", "segunda que vem": never today, even when its time is still ahead.
const NEXT = /(?<![\p{L}\p{N}])(?:next|proxim[ao]|que vem)(?![\p{L}\p{N}])/u;
// "next month", "do mês que vem", "no próximo mês": chrono reads no day in it (and Portuguese not
// at all), so a day of the month counts from next month, and without one it is a month from today.
const NEXT_MONTH = /(?<![\p{L}\p{N}])(?:(?:of|do|no)\s+)?(?:the\s+)?(?:next month|mes que vem|proximo mes)(?![\p{L}\p{N}])/u;
// An hour from 1 to 11, alone or with its minutes in words ("at 7", "às dez", "at 3 o'clock",
// "half past 8", "às 8 e meia") is said on a 12-hour clock: which 7 is meant is the next one to
// come. A clock's digits ("7:00", "08:30", as much of the world writes the 24-hour clock), "7h",
// "7h30" or "7 horas" write it as meant, and a part of the day, noon or midnight says its half:
// those are read as written.
const AS_WRITTEN =
  /(?<![\p{L}\p{N}:])0\d|\d:\d|\dh(?!\p{L})|(?<!\p{L})(?:horas?|manha|madrugada|tarde|noite|morning|afternoon|evening|night|tonight|noon|midnight|meio)(?!\p{L})/u;
const CONNECTOR = /^(?:to|about|of|that|de|da|do|das|dos|para|pra|sobre|que)\s+/iu;

/** What a reminder without a time of day reads as ("remind me to call mom", "… tomorrow"): the planner asks when rather than guess. */
export const NO_TIME = 'no time';

/**
 * Reads when and what from the words after "remind me" / "me lembra", in either order: "tomorrow
 * at 9 to call mom", "to call mom tomorrow at 9", "toda segunda às 8 de regar as plantas".
 * NO_TIME when no time of day is said; null when nothing is left to remind of or it cannot be one.
 */
export function parseReminder(raw: string, language: Language, clock: Clock): ReminderRequest | typeof NO_TIME | null {
  if (raw.length > MAX_CHARS) return null;
  const zone = IANAZone.isValidZone(clock.timezone) ? clock.timezone : 'UTC';
  const zoned = DateTime.fromJSDate(clock.now, { zone });
  // Days are counted on the wall clock, labelled UTC so no daylight-saving gap moves an hour:
  // "every day at 2:30" said before a spring-forward night stays 02:30 (the tool worker decides
  // what a skipped time means, docs/tools.md#times).
  const now = zoned.setZone('UTC', { keepLocalTime: true });

  const folded = fold(raw);
  if (INTERVAL.test(folded)) return null;
  const spans: Span[] = [];
  let scanned = raw;
  const recurrence = REPEATS.exec(folded);
  if (recurrence) {
    const span = [recurrence.index, recurrence.index + recurrence[0].length] as const;
    spans.push(span);
    // Blanked, not removed, so chrono's indices still point into the raw text; a plural weekday
    // becomes its singular, padded to the same length, for chrono to read the day.
    const [from, to] = recurrence.indices?.groups?.plural ?? span;
    const day = singularWeekday(recurrence.groups?.plural);
    scanned =
      raw.slice(0, span[0]) + ' '.repeat(from - span[0]) + day + ' '.repeat(to - from - day.length + span[1] - to) + raw.slice(span[1]);
  }
  const results = TIME_PARSERS[language].parse(scanned, { instant: clock.now, timezone: zoned.offset }, { forwardDate: true });
  const time = results.find((result) => result.start.isCertain('hour') && !COUNTS.test(result.text));
  if (!time) return NO_TIME;
  const day = results.find((result) => result.start.isCertain('day') || result.start.isCertain('weekday'));
  const phrase = timeRangeSpan(scanned, results, time);
  spans.push(phrase);
  if (day && day !== time) spans.push([day.index, day.index + day.text.length]);
  const part = partOfDayAfter(scanned, Math.max(...spans.map(([, end]) => end)), time);
  if (part) spans.push(part);
  const monthDay = day ? null : MONTH_DAY.exec(fold(scanned));
  if (monthDay) spans.push([monthDay.index, monthDay.index + monthDay[0].length]);
  const nextMonth = day ? null : NEXT_MONTH.exec(folded);
  if (nextMonth) spans.push([nextMonth.index, nextMonth.index + nextMonth[0].length]);

  const text = withoutSpans(raw, spans).replace(CONNECTOR, '');
  const repeat = recurrence ? repeatOf(recurrence.groups ?? {}) : undefined;
  const next = monthDay
    ? onMonthDay(Number(monthDay[1] ?? monthDay[2]), time, now, repeat === 'monthly', nextMonth ? 1 : 0)
    : nextMonth
      ? now.plus({ months: 1 }).set({ hour: time.start.get('hour') ?? 0, minute: time.start.get('minute') ?? 0, second: 0, millisecond: 0 })
      : resolve(
          time,
          day,
          now,
          zone,
          NEXT.test(fold(day?.text ?? '')),
          repeat === undefined && onTwelveHourClock(time, scanned.slice(...phrase)),
        );
  // "every weekday at 8" said on a Friday evening first fires on Monday, not on Saturday.
  const first = repeat === 'weekdays' && next && next.weekday > 5 ? next.plus({ days: 8 - next.weekday }) : next;
  const at = first?.startOf('second').toISO({ includeOffset: false, suppressMilliseconds: true });
  if (text === '' || !at) return null;
  return { text, at, ...(repeat ? { repeat } : {}) };
}

// The part of the day right after the time and day chrono read: "at 9 tomorrow morning", "às 8
// amanhã à noite", "at 9 on Friday morning". Folded text.
const PART_AFTER = /^\s+(?:(?:in the|de|da|a)\s+)?(morning|afternoon|evening|night|manha|tarde|noite)(?![\p{L}\p{N}])/u;
const LATE_PARTS = new Set(['afternoon', 'evening', 'night', 'tarde', 'noite']);

/**
 * The span of such a part of the day, its hour moved to the afternoon or evening when it says so;
 * either way the half of the clock is then known ("at 7 in the morning" is no bare "at 7").
 */
function partOfDayAfter(raw: string, end: number, time: ParsedResult): Span | null {
  const part = PART_AFTER.exec(fold(raw.slice(end, end + 24)));
  if (!part) return null;
  const hour = time.start.get('hour') ?? 0;
  if (!time.start.isCertain('meridiem') && hour < 12 && time.start instanceof ParsingComponents) {
    const late = LATE_PARTS.has(part[1] ?? '');
    time.start.assign('hour', late ? hour + 12 : hour);
    time.start.assign('meridiem', late ? Meridiem.PM : Meridiem.AM);
  }
  return [end, end + part[0].length];
}

/** Whether the time, its phrase as said (a range with both ends), is an hour of a 12-hour clock (AS_WRITTEN). */
function onTwelveHourClock(time: ParsedResult, phrase: string): boolean {
  const hour = time.start.get('hour') ?? 0;
  return hour >= 1 && hour <= 11 && !time.start.isCertain('meridiem') && !AS_WRITTEN.test(fold(phrase));
}

/** "domingos" → "domingo", "sextas-feiras" → "sexta", "sundays" → "sunday"; '' for none. */
function singularWeekday(plural: string | undefined): string {
  if (!plural) return '';
  const hyphen = plural.indexOf('-');
  const word = (hyphen === -1 ? plural : plural.slice(0, hyphen)).slice(0, -1);
  return SINGULAR[word] ?? word;
}

function repeatOf(groups: Record<string, string | undefined>): Repeat {
  if (groups.weekdays) return 'weekdays';
  if (groups.daily) return 'daily';
  if (groups.monthly) return 'monthly';
  return 'weekly';
}

/**
 * The next matching wall-clock time: a given date ("tomorrow", "on the 5th") as is, a weekday the
 * next one still ahead (`nextWeek`, "next Monday" said on a Monday: the one a week on), a bare
 * time of day or today's ("today", "tonight") today or else tomorrow. A relative time ("in 20
 * minutes") is an instant, read on the user's clock. `twelveHour`: the next one on a 12-hour clock
 * (a one-off reminder's "at 7").
 */
function resolve(
  time: ParsedResult,
  day: ParsedResult | undefined,
  now: DateTime,
  zone: string,
  nextWeek: boolean,
  twelveHour: boolean,
): DateTime | null {
  const clock = time.start;
  if (clock.isCertain('timezoneOffset') && (day === undefined || day === time)) {
    return DateTime.fromJSDate(clock.date(), { zone }).setZone('UTC', { keepLocalTime: true });
  }
  const hour = clock.get('hour') ?? 0;
  const minute = clock.get('minute') ?? 0;
  const date = day?.start;
  const today = now.set({ hour, minute, second: 0, millisecond: 0 });
  if (date?.isCertain('day')) {
    const at = DateTime.fromObject(
      { year: date.get('year') ?? now.year, month: date.get('month') ?? now.month, day: date.get('day') ?? now.day, hour, minute },
      { zone: 'UTC' },
    );
    if (!at.isValid) return null;
    // Today's ("today at 15:00", "tonight at 7") is a time of day like one said alone, never past.
    if (!at.hasSame(now, 'day')) return at;
  } else if (date?.isCertain('weekday')) {
    // chrono numbers Sunday 0; Luxon numbers Monday 1 to Sunday 7.
    const weekday = date.get('weekday') || 7;
    const at = today.plus({ days: (weekday - today.weekday + 7) % 7 });
    return at <= now || (nextWeek && at.hasSame(now, 'day')) ? at.plus({ weeks: 1 }) : at;
  }
  if (today > now) return today;
  // "at 7" said at noon is this evening's 7:00, not tomorrow morning's. A repeat keeps the hour as
  // said: "every day at 7" must not become 19:00 for ever because it was said after 7:00.
  const later = today.plus({ hours: 12 });
  return twelveHour && later > now ? later : today.plus({ days: 1 });
}

/**
 * The next time on that day of the month, from `monthsAhead` months on ("next month"): that
 * month's if still ahead, else the following one's. Like a monthly reminder (docs/tools.md#times),
 * a one-off one on the 31st falls on the last day of a shorter month; a monthly one starts in a
 * month that has the day, since every later month keeps the day of its first `at`.
 */
function onMonthDay(day: number, time: ParsedResult, now: DateTime, monthly: boolean, monthsAhead: number): DateTime | null {
  const thisMonth = now
    .plus({ months: monthsAhead })
    .set({ hour: time.start.get('hour') ?? 0, minute: time.start.get('minute') ?? 0, second: 0, millisecond: 0 });
  // Any day of the month comes within three months (the 31st after 31 January: 31 March).
  for (let months = 0; months < 3; months++) {
    const month = thisMonth.plus({ months });
    const daysInMonth = month.daysInMonth as number;
    if (monthly && day > daysInMonth) continue;
    const at = month.set({ day: Math.min(day, daysInMonth) });
    if (at > now) return at;
  }
  return null;
}

/** The text without the time and repeat phrases, spaces collapsed and stray punctuation trimmed. */
function withoutSpans(raw: string, spans: Span[]): string {
  const sorted = [...spans].sort((a, b) => a[0] - b[0]);
  let kept = '';
  let from = 0;
  for (const [start, end] of sorted) {
    // "de" between two time phrases joins them: "amanhã de manhã às 8h", "às 15h de amanhã".
    const joining = from > 0 && raw.slice(from, start).trim().toLowerCase() === 'de';
    if (start > from && !joining) kept += `${withoutDanglingWords(raw.slice(from, start))} `;
    from = Math.max(from, end);
  }
  kept += raw.slice(from);
  const text = kept.replace(/\s+/g, ' ');
  const start = skip(text, 0, ',;:.!?-');
  return text.slice(start, Math.max(start, skipBack(text, text.length, ',;:-')));
}

// Words that belonged to a removed time phrase chrono did not take in: "on" December 24, "no dia" 24,
// "at" noon, "at" 2026-12-01 09:00, "on the" next Monday, "nesta" segunda, "à" noite, "for" 3pm.
const DANGLING = new Set(['at', 'on', 'the', 'no', 'na', 'em', 'dia', 'nesta', 'neste', 'nessa', 'nesse', 'esta', 'este', 'à', 'for']);

function withoutDanglingWords(segment: string): string {
  let rest = segment.trimEnd();
  for (let words = 0; words < 2; words++) {
    const space = Math.max(rest.lastIndexOf(' '), rest.lastIndexOf('\t'));
    if (!DANGLING.has(rest.slice(space + 1).toLowerCase())) break;
    rest = rest.slice(0, space + 1).trimEnd();
  }
  return rest;
}
