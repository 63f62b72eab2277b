import { ParsingComponents, pt, type Chrono, type Parser } from 'chrono-node';

/*
 * chrono's Portuguese parsers read "às 15:00" and "amanhã às 9" but not the way Brazilians and
 * Portuguese usually write hours ("15h", "às 15h30") nor "daqui a 20 minutos". These extend it
 * through chrono's own parser interface, so its refiners still merge "amanhã" with "às 9h".
 */

// After a letter or digit a match would cut a word in two ("2 hambúrgueres", "a15h").
const START = String.raw`(?<![\p{L}\p{N}])`;
const END = String.raw`(?![\p{L}\p{N}])`;

// Only valid hours match: after a refused match chrono searches again from the next character,
// where "25h" would read as "5h".
const HOUR = '([01]?\\d|2[0-3])';
const MINUTE = '([0-5]\\d)';
const HOUR_WORDS: Record<string, number> = {
  uma: 1,
  duas: 2,
  tres: 3,
  três: 3,
  quatro: 4,
  cinco: 5,
  seis: 6,
  sete: 7,
  oito: 8,
  nove: 9,
  dez: 10,
  onze: 11,
  doze: 12,
};
// An hour said after "às" may be a word: "às oito", "à uma e meia".
const SPOKEN_HOUR = `([01]?\\d|2[0-3]|${Object.keys(HOUR_WORDS).join('|')})`;
const AT = '(?:às|as|à|a)';
const MINUTE_WORDS: Record<string, number> = {
  'vinte e cinco': 25,
  'trinta e cinco': 35,
  'quarenta e cinco': 45,
  'cinquenta e cinco': 55,
  cinco: 5,
  dez: 10,
  quinze: 15,
  vinte: 20,
  meia: 30,
  trinta: 30,
  quarenta: 40,
  cinquenta: 50,
};
// A bare number must end the time phrase (before a connector, punctuation or the end), so the
// article in "pagar as 2 contas" and the count in "dar 10 para as 2 crianças" stay text.
const PHRASE_END = String.raw`(?=\s*(?:$|[^\p{L}\s]|(?:de|da|do|pra|para|e)${END}))`;
// A number of minutes is a word, or digits followed by "min(utos)" or the end of the phrase.
const MINUTES = String.raw`(?:(${Object.keys(MINUTE_WORDS).join('|')})|([0-5]?\d)(?:\s*min(?:utos?)?${END}|${PHRASE_END}))`;

const hourNumber = (said: string | undefined) => HOUR_WORDS[(said ?? '').toLowerCase()] ?? Number(said);
const minuteNumber = (said: string | undefined) => MINUTE_WORDS[(said ?? '').toLowerCase()] ?? Number(said ?? 0);

/** "15h", "15h30", "às 15h", "as 15h30min", "às 15 horas", "às oito horas". */
const hours: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?:(?:${AT}\s+)?${HOUR}h(?:${MINUTE}(?:min)?)?|${AT}\s+${SPOKEN_HOUR}(?::${MINUTE})?\s+(?:horas|hrs|hs))${END}`,
      'iu',
    ),
  extract: (_context, match) => ({ hour: hourNumber(match[1] ?? match[3]), minute: Number(match[2] ?? match[4] ?? 0) }),
};

const PERIOD = '(manhã|manha|madrugada|tarde|noite)';

/** The hour of "8 da noite" (20), "3 da tarde" (15), "12 da noite" (0): the part of the day says which 8 it is. */
function hourOf(hour: number, period: string | undefined): number {
  const part = (period ?? '').toLowerCase();
  if (part !== 'tarde' && part !== 'noite') return hour;
  // "12 da noite" is midnight; "12 da tarde" noon.
  if (part === 'noite' && hour === 12) return 0;
  return hour < 12 ? hour + 12 : hour;
}

/** "às 8 da noite", "as 3 da tarde", "às 7h30 da manhã", "às oito da noite", "às 8 horas da manhã". */
const hourOfPeriod: Parser = {
  pattern: () =>
    new RegExp(String.raw`${START}(?:${AT}\s+${SPOKEN_HOUR}|${HOUR})(?:h${MINUTE}?|:${MINUTE}|\s+horas?)?\s+da\s+${PERIOD}${END}`, 'iu'),
  extract: (_context, match) => ({
    hour: hourOf(hourNumber(match[1] ?? match[2]), match[5]),
    minute: Number(match[3] ?? match[4] ?? 0),
  }),
};

/**
 * "às 8 e meia", "8h e quinze", "às 9 e 45", "às 9 horas e 30 minutos", "às 7 e meia da noite". A
 * bare "8 e meia" needs "às" or "h" to be an hour, so "2 e meia dúzias" stays text.
 */
const hourAndMinutes: Parser = {
  pattern: () =>
    new RegExp(String.raw`${START}(?:${AT}\s+${SPOKEN_HOUR}(?:h|\s+horas?)?|${HOUR}h)\s+e\s+${MINUTES}(?:\s+da\s+${PERIOD})?${END}`, 'iu'),
  extract: (_context, match) => ({ hour: hourOf(hourNumber(match[1] ?? match[2]), match[5]), minute: minuteNumber(match[3] ?? match[4]) }),
};

/**
 * "8 e meia da noite", "oito e quinze da manhã", "7 e 45 da noite": without "às" or "h", the part
 * of the day makes it an hour; minutes are a word or two digits, so "entre 3 e 4 da tarde" stays a range.
 */
const hourAndMinutesOfPeriod: Parser = {
  pattern: () =>
    new RegExp(String.raw`${START}${SPOKEN_HOUR}\s+e\s+(${Object.keys(MINUTE_WORDS).join('|')}|[0-5]\d)\s+da\s+${PERIOD}${END}`, 'iu'),
  extract: (_context, match) => ({ hour: hourOf(hourNumber(match[1]), match[3]), minute: minuteNumber(match[2]) }),
};

/** "quinze para as 9", "às dez para as oito da noite", "20 para as 9h", "cinco para o meio-dia": minutes before the hour. */
const minutesTo: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?:${AT}\s+)?(cinco|dez|quinze|vinte(?: e cinco)?|[1-9]|[12]\d|30)(?:\s+minutos)?\s+para\s+(?:${AT}|o)\s+` +
        String.raw`(?:(meio[-\s]dia|meia[-\s]noite)|${SPOKEN_HOUR}(?:(?:h|\s+horas?)(?:\s+da\s+${PERIOD})?|\s+da\s+${PERIOD}|${PHRASE_END}))${END}`,
      'iu',
    ),
  extract: (_context, match) => {
    const noon = (match[2] ?? '').toLowerCase().startsWith('meio');
    const hour = match[2] ? (noon ? 12 : 0) : hourOf(hourNumber(match[3]), match[4] ?? match[5]);
    return { hour: (hour + 23) % 24, minute: 60 - minuteNumber(match[1]) };
  },
};

/**
 * "as 15:00", "amanha as 9 de ...", "às dez": "às" typed without its accent, or before an hour
 * said as a word, read as chrono reads "às 9". A bare hour must end the time phrase.
 */
const spokenAt: Parser = {
  pattern: () => new RegExp(String.raw`${START}(?:às|as|à)\s+(?:${HOUR}:${MINUTE}|${SPOKEN_HOUR}${PHRASE_END})${END}`, 'iu'),
  extract: (_context, match) => ({ hour: hourNumber(match[1] ?? match[3]), minute: Number(match[2] ?? 0) }),
};

/**
 * "ao meio-dia", "meio dia", "à meia-noite", "meia-noite e meia", "meio-dia e quinze": chrono's
 * own "meio-dia" only implies its hour, so alone it is no time of day, and it does not read the
 * words without hyphen.
 */
const noonAndMidnight: Parser = {
  pattern: () => new RegExp(String.raw`${START}(?:(?:ao|à|a)\s+)?(?:(meio)[-\s]dia|meia[-\s]noite)(?:\s+e\s+${MINUTES})?${END}`, 'iu'),
  extract: (_context, match) => ({
    hour: match[1] ? 12 : 0,
    minute: minuteNumber(match[2] ?? match[3]),
  }),
};

const WEEKDAYS: Record<string, number> = {
  domingo: 0,
  segunda: 1,
  terça: 2,
  terca: 2,
  quarta: 3,
  quinta: 4,
  sexta: 5,
  sábado: 6,
  sabado: 6,
};

/**
 * "próxima segunda", "na próxima sexta-feira", "segunda que vem": chrono reads only "próximo" and
 * leaves "próxima" or "que vem" in the reminder's text. The weekday is all a reminder needs.
 */
const nextWeekday: Parser = {
  pattern: () => {
    const weekday = String.raw`(domingo|segunda|ter[cç]a|quarta|quinta|sexta|s[aá]bado)(?:-feira)?`;
    return new RegExp(String.raw`${START}(?:pr[oó]xim[oa]\s+${weekday}|${weekday}\s+que\s+vem)${END}`, 'iu');
  },
  extract: (_context, match) => {
    const weekday = WEEKDAYS[(match[1] ?? match[2] ?? '').toLowerCase()];
    return weekday === undefined ? null : { weekday };
  },
};

/** "na próxima semana", "semana que vem": a week from today, as chrono reads the English "next week". */
const nextWeek: Parser = {
  pattern: () => new RegExp(String.raw`${START}(?:na\s+)?(?:pr[oó]xima\s+semana|semana\s+que\s+vem)${END}`, 'iu'),
  extract: (context) => ParsingComponents.createRelativeFromReference(context.reference, { week: 1 }),
};

/** "depois de amanhã": chrono reads only the "amanhã" in it, a day early. */
const dayAfterTomorrow: Parser = {
  pattern: () => new RegExp(String.raw`${START}depois\s+de\s+amanh[ãa]${END}`, 'iu'),
  extract: (context) => ParsingComponents.createRelativeFromReference(context.reference, { day: 2 }),
};

const UNITS: Record<string, 'minute' | 'hour' | 'day' | 'week'> = {
  min: 'minute',
  minuto: 'minute',
  hora: 'hour',
  h: 'hour',
  dia: 'day',
  semana: 'week',
};
const COUNTS: Record<string, number> = { um: 1, uma: 1, dois: 2, duas: 2, tres: 3, três: 3, meia: 0.5 };

/**
 * "daqui a 20 minutos", "em 2 horas", "daqui a 1h", "dentro de meia hora", "daqui a uma hora e
 * meia", "em 1h30": an instant, counted from now. It is longer than the hour "a 1h30" or "a uma
 * hora e meia" inside it, and begins first, so chrono keeps this reading.
 */
const relative: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?:daqui\s+a|daqui|em|dentro\s+de)\s+(\d{1,4}|um|uma|dois|duas|tr[eê]s|meia)\s*(min|minutos?|horas?|h|dias?|semanas?)` +
        String.raw`(?:\s+e\s+(?:(meia)|([0-5]?\d)\s*min(?:utos?)?)|(?<=\dh)([0-5]\d)(?:min)?)?${END}`,
      'iu',
    ),
  extract: (context, match) => {
    const count = COUNTS[(match[1] ?? '').toLowerCase()] ?? Number(match[1]);
    const unit = UNITS[(match[2] ?? '').toLowerCase().replace(/s$/, '')];
    const minutes = match[3] ? 30 : Number(match[4] ?? match[5] ?? 0);
    if (!unit || (minutes > 0 && (unit !== 'hour' || !Number.isInteger(count)))) return null;
    if (Number.isInteger(count)) {
      return ParsingComponents.createRelativeFromReference(context.reference, { [unit]: count, ...(minutes ? { minute: minutes } : {}) });
    }
    // "meia hora" is thirty minutes; half of another unit is no way people say it.
    return unit === 'hour' ? ParsingComponents.createRelativeFromReference(context.reference, { minute: 30 }) : null;
  },
};

/** chrono's casual Portuguese with the forms above. */
export function portugueseTimeParser(): Chrono {
  const parser = pt.casual.clone();
  // First, so it wins a tie with chrono's "meio-dia": of two results at one place chrono keeps the
  // longer, or else the one found first.
  parser.parsers.unshift(noonAndMidnight);
  parser.parsers.push(
    hours,
    hourOfPeriod,
    hourAndMinutes,
    hourAndMinutesOfPeriod,
    minutesTo,
    spokenAt,
    nextWeekday,
    nextWeek,
    dayAfterTomorrow,
    relative,
  );
  return parser;
}
