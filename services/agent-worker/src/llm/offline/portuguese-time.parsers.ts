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

/** "15h", "15h30", "às 15h", "as 15h30min", "às 15 horas". */
const hours: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?:(?:(?:às|as|a)\s+)?${HOUR}h(?:${MINUTE}(?:min)?)?|(?:às|as)\s+${HOUR}(?::${MINUTE})?\s+(?:horas|hrs|hs))${END}`,
      'iu',
    ),
  extract: (_context, match) => ({ hour: Number(match[1] ?? match[3]), minute: Number(match[2] ?? match[4] ?? 0) }),
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

/** "às 8 da noite", "as 3 da tarde", "às 7h30 da manhã". */
const hourOfPeriod: Parser = {
  pattern: () => new RegExp(String.raw`${START}(?:(?:às|as|a)\s+)?${HOUR}(?:h${MINUTE}?|:${MINUTE})?\s+da\s+${PERIOD}${END}`, 'iu'),
  extract: (_context, match) => ({ hour: hourOf(Number(match[1]), match[4]), minute: Number(match[2] ?? match[3] ?? 0) }),
};

/**
 * "às 8 e meia", "8h e meia", "às 7 e meia da noite". A bare "8 e meia" needs "às" or "h" to be an
 * hour, so "2 e meia dúzias" stays text.
 */
const halfPast: Parser = {
  pattern: () =>
    new RegExp(String.raw`${START}(?:(?:às|as|a)\s+${HOUR}(?:h|\s+horas)?|${HOUR}h)\s+e\s+meia(?:\s+da\s+${PERIOD})?${END}`, 'iu'),
  extract: (_context, match) => ({ hour: hourOf(Number(match[1] ?? match[2]), match[3]), minute: 30 }),
};

/**
 * "as 15:00", "amanha as 9 de ...": "às" typed without its accent, read as chrono reads "às 9".
 * A bare hour must end the time phrase (before a connector, punctuation or the end), so the
 * article in "pagar as 2 contas" stays text.
 */
const unaccentedAt: Parser = {
  pattern: () =>
    new RegExp(String.raw`${START}as\s+(?:${HOUR}:${MINUTE}|${HOUR}(?=\s*(?:$|[^\p{L}\s]|(?:de|da|do|pra|para|e)${END})))${END}`, 'iu'),
  extract: (_context, match) => ({ hour: Number(match[1] ?? match[3]), minute: Number(match[2] ?? 0) }),
};

/**
 * "ao meio-dia", "meio dia", "à meia-noite", "meia-noite e meia": chrono's own "meio-dia" only
 * implies its hour, so alone it is no time of day, and it does not read the words without hyphen.
 */
const noonAndMidnight: Parser = {
  pattern: () => new RegExp(String.raw`${START}(?:(?:ao|à|a)\s+)?(?:(meio)[-\s]dia|meia[-\s]noite)(\s+e\s+meia)?${END}`, 'iu'),
  extract: (_context, match) => ({ hour: match[1] ? 12 : 0, minute: match[2] ? 30 : 0 }),
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
 * "daqui a 20 minutos", "em 2 horas", "daqui a 1h", "dentro de meia hora": an instant, counted
 * from now. "daqui a 1h" is longer than the hour "a 1h" in it, so chrono keeps this reading.
 */
const relative: Parser = {
  pattern: () =>
    new RegExp(
      String.raw`${START}(?:daqui\s+a|daqui|em|dentro\s+de)\s+(\d{1,4}|um|uma|dois|duas|tr[eê]s|meia)\s*(min|minutos?|horas?|h|dias?|semanas?)${END}`,
      'iu',
    ),
  extract: (context, match) => {
    const count = COUNTS[(match[1] ?? '').toLowerCase()] ?? Number(match[1]);
    const unit = UNITS[(match[2] ?? '').toLowerCase().replace(/s$/, '')];
    if (!unit) return null;
    if (Number.isInteger(count)) return ParsingComponents.createRelativeFromReference(context.reference, { [unit]: count });
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
  parser.parsers.push(hours, hourOfPeriod, halfPast, unaccentedAt, nextWeekday, relative);
  return parser;
}
