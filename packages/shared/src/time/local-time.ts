import { DateTime, IANAZone } from 'luxon';
import { z } from 'zod';
import { BoundedMap } from '../bounded-map';
import { tzDatabase } from './tz-database';

/**
 * Every computation with a user's zone goes through Luxon (docs/architecture.md, "Time zones"):
 * no offset arithmetic by hand. A wall-clock time is a zone-less date and time of day.
 */
export interface WallClock {
  year: number;
  month: number;
  day: number;
  hour: number;
  minute: number;
  second: number;
  millisecond: number;
}

/**
 * An IANA zone name (`America/Sao_Paulo`, `UTC`). Fixed offsets like `+03:00` are refused: they
 * would keep their offset across a daylight-saving change, which is what a zone is for.
 */
export function isTimeZone(name: string): boolean {
  return /^[A-Za-z][A-Za-z0-9_+\-/]*$/.test(name) && IANAZone.isValidZone(name);
}

/** Every zone name of the time zone database, renamed and deprecated ones too, by its lowercase spelling. */
const ZONE_NAMES = new Map(Object.keys(tzDatabase.getAllTimezones({ deprecated: true })).map((zone) => [zone.toLowerCase(), zone]));

/** The zone as the time zone database spells it (the database matches names case-insensitively). */
export function canonicalTimeZone(name: string): string {
  // ICU's own list lacks names the database gained by a rename (Asia/Kolkata, Europe/Kyiv).
  const known = ZONE_NAMES.get(name.toLowerCase());
  if (known !== undefined) return known;
  const resolved = new Intl.DateTimeFormat('en-US', { timeZone: name }).resolvedOptions().timeZone;
  // ICU sometimes answers an older alias (Asia/Calcutta for Asia/Kolkata): keep the user's name then.
  return resolved.toLowerCase() === name.toLowerCase() ? resolved : name;
}

export const timeZoneSchema = z
  .string()
  .trim()
  .max(64)
  .refine(isTimeZone, { error: 'must be an IANA time zone name, like America/Sao_Paulo or UTC' })
  .transform(canonicalTimeZone);

/**
 * The instant a wall-clock time names in `zone`. A time the spring-forward gap skips moves
 * forward by the gap's length (02:30 becomes 03:30); a time the fall-back overlap repeats is its
 * first occurrence (the earlier instant). Luxon resolves overlaps differently per zone, so the
 * earlier of its candidates is picked here explicitly.
 */
export function instantOf(wall: WallClock, zone: string): Date {
  const local = DateTime.fromObject(wall, { zone });
  const candidates = local.getPossibleOffsets();
  const first = candidates.reduce((earliest, candidate) => (candidate.toMillis() < earliest.toMillis() ? candidate : earliest), local);
  return first.toJSDate();
}

/** The wall-clock time of an instant in `zone`. */
export function wallClockOf(instant: Date, zone: string): WallClock {
  const { year, month, day, hour, minute, second, millisecond } = DateTime.fromJSDate(instant, { zone });
  return { year, month, day, hour, minute, second, millisecond };
}

/** `2026-11-23 09:00`: the wall-clock date and time of an instant in `zone`, to the minute. */
export function localDateTime(instant: Date, zone: string): string {
  return DateTime.fromJSDate(instant, { zone }).toFormat('yyyy-MM-dd HH:mm');
}

/** `2026-11-23 09:00 (America/Sao_Paulo)`: how times are shown to users and the model (docs/tools.md#times). */
export function formatLocal(instant: Date, zone: string): string {
  return `${localDateTime(instant, zone)} (${zone})`;
}

/** ISO 8601 with the zone's offset of that instant, e.g. `2026-11-23T09:00:00.000-03:00` (`Z` in UTC). */
export function isoInZone(instant: Date, zone: string): string {
  return DateTime.fromJSDate(instant, { zone }).toISO() as string;
}

/** The clock line of a turn's context: `Monday, 2026-11-23 09:05 (America/Sao_Paulo, UTC-03:00)`. */
export function describeNow(now: Date, zone: string): string {
  const key = `${zone} ${Math.floor(now.getTime() / 60_000)}`;
  let line = clockLines.get(key);
  if (line === undefined) {
    const local = DateTime.fromJSDate(now, { zone });
    line = `${local.setLocale('en-US').toFormat('cccc, yyyy-MM-dd HH:mm')} (${zone}, UTC${local.toFormat('ZZ')})`;
    // The line changes once a minute: every step of that minute in that zone shares it.
    clockLines.set(key, line);
  }
  return line;
}

const clockLines = new BoundedMap<string, string>(1_000);

const DATE_TIME_SPELLING =
  /^(?<date>\d{4}-\d{2}-\d{2})[T ](?<time>\d{2}:\d{2})(?<seconds>:\d{2}(?:\.\d+)?)?(?:(?<utc>Z)|(?<hours>[+-]\d{2})(?::?(?<minutes>\d{2}))?)?$/i;

/**
 * Other ISO 8601 and RFC 3339 spellings of a date-time that models and users write, as the
 * extended form the tool schemas check (`2026-05-01T15:00:00-03:00`): a space instead of the `T`,
 * no seconds, a basic (`-0300`) or hours-only (`-03`) offset, a lowercase `t` or `z`. Anything
 * else comes back as it is, for the schema to refuse; a date alone too (a reminder needs a time).
 */
export function normalizeDateTime(text: string): string {
  const { date, time, seconds = ':00', utc, hours, minutes = '00' } = DATE_TIME_SPELLING.exec(text.trim())?.groups ?? {};
  if (date === undefined || time === undefined) return text;
  const offset = utc ? 'Z' : hours ? `${hours}:${minutes}` : '';
  return `${date}T${time}${seconds}${offset}`;
}

/**
 * Reads an ISO 8601 date-time: with an offset (or `Z`) it is that instant; without one it is a
 * wall-clock time in `zone`. Undefined when the text is not a date-time.
 */
export function parseLocalDateTime(text: string, zone: string): { instant: Date; wall: WallClock } | undefined {
  const withOffset = /(?:[zZ]|[+-]\d{2}(?::?\d{2})?)$/.test(text);
  // A zone-less time is read in UTC first, which has no gaps, so its fields stay as written.
  const parsed = DateTime.fromISO(text, withOffset ? { setZone: true } : { zone: 'UTC' });
  if (!parsed.isValid) return undefined;
  if (withOffset) return { instant: parsed.toJSDate(), wall: wallClockOf(parsed.toJSDate(), zone) };
  const wall = wallClockOf(parsed.toJSDate(), 'UTC');
  return { instant: instantOf(wall, zone), wall };
}

/** A wall-clock time as PostgreSQL `timestamp` text: `2026-11-23T09:00:00.000`. */
export function wallClockText(wall: WallClock): string {
  return DateTime.fromObject(wall, { zone: 'UTC' }).toFormat("yyyy-MM-dd'T'HH:mm:ss.SSS");
}

/** Reads `timestamp` text (`2026-11-23 09:00:00` or with a `T`) as a wall-clock time. */
export function wallClockFromText(text: string): WallClock {
  return wallClockOf(DateTime.fromISO(text.replace(' ', 'T'), { zone: 'UTC' }).toJSDate(), 'UTC');
}
