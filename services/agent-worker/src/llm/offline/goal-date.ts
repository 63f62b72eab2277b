import { DateTime, IANAZone } from 'luxon';
import { TIME_PARSERS, type Clock } from './reminder-time';

// A date is no longer than this ("Wednesday, the 31st of December of 2026"); it bounds chrono's work.
const MAX_CHARS = 60;
const ISO = /^\d{4}-\d{2}-\d{2}$/;
const NUMERIC = /^(\d{1,2})[./-](\d{1,2})[./-](\d{4})$/;
/** A goal that ends in something written like a number date ("by 2026-13-45") that is none. */
export const ENDS_IN_NUMERIC_DATE = /\s(?:by|until|ate|até)\s+\d{1,4}[./-]\d{1,2}[./-]\d{1,4}$/iu;

const pad = (n: number) => String(n).padStart(2, '0');

/**
 * The date after "by" / "até" of a goal, as YYYY-MM-DD, or null when the words are no date (the
 * goal's title then keeps them: "Read by the lake"). ISO; day, month and year in numbers, day
 * first as Portuguese and most English outside the US write it, month first only where the
 * second number cannot be a month; or a date in words ("December 31, 2026", "31 de dezembro").
 */
export function goalDate(when: string, clock: Clock): string | null {
  if (ISO.test(when)) return when;
  const numeric = NUMERIC.exec(when);
  if (numeric) {
    const [first, second, year] = numeric.slice(1).map(Number) as [number, number, number];
    const [day, month] = second > 12 ? [second, first] : [first, second];
    return `${year}-${pad(month)}-${pad(day)}`;
  }
  if (when.length > MAX_CHARS) return null;
  // "by tomorrow" is the user's tomorrow.
  const timezone = DateTime.fromJSDate(clock.now, { zone: IANAZone.isValidZone(clock.timezone) ? clock.timezone : 'UTC' }).offset;
  for (const parser of [TIME_PARSERS.en, TIME_PARSERS.pt]) {
    const [date] = parser.parse(when, { instant: clock.now, timezone }, { forwardDate: true });
    const whole = date?.index === 0 && date.text.length === when.length;
    if (whole && date.start.isCertain('day') && date.start.isCertain('month') && !date.start.isCertain('hour')) {
      return `${date.start.get('year')}-${pad(date.start.get('month') ?? 0)}-${pad(date.start.get('day') ?? 0)}`;
    }
  }
  return null;
}
