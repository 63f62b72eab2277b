import { DateTime } from 'luxon';
import { instantOf, wallClockOf, type WallClock } from './local-time';

export const REMINDER_REPEATS = ['daily', 'weekdays', 'weekly', 'monthly'] as const;
export type ReminderRepeat = (typeof REMINDER_REPEATS)[number];

/**
 * A repeating reminder's rhythm, in the user's zone: `anchor` is the wall-clock time it was set
 * for, whose time of day every occurrence keeps (and its weekday for `weekly`, its day of the
 * month for `monthly`, the month's last day when the month is shorter).
 */
export interface RepeatRule {
  repeat: ReminderRepeat;
  anchor: WallClock;
  zone: string;
}

/** Enough days to pass any weekend; enough months to reach any day of the month. */
const MAX_STEPS = 14;

/**
 * The first occurrence strictly after `after`, never before the anchor itself. Each candidate
 * date gets the anchor's time of day resolved in the zone (instantOf: gaps move forward, overlaps
 * take the first occurrence), so 09:00 stays 09:00 across daylight-saving changes.
 */
export function nextOccurrence(rule: RepeatRule, after: Date): Date {
  const { anchor, zone } = rule;
  const start = instantOf(anchor, zone);
  const from = after.getTime() < start.getTime() ? new Date(start.getTime() - 1) : after;
  const local = wallClockOf(from, zone);
  // Start a day (or month) early: the time of day may have fallen before `from` on its own date.
  let date = DateTime.fromObject({ year: local.year, month: local.month, day: local.day }, { zone: 'UTC' });
  date = rule.repeat === 'monthly' ? date.startOf('month').minus({ months: 1 }) : date.minus({ days: 1 });
  for (let step = 0; step < (rule.repeat === 'monthly' ? MAX_STEPS : 7 * MAX_STEPS); step++) {
    const day = rule.repeat === 'monthly' ? date.plus({ months: step }) : date.plus({ days: step });
    if (!matches(rule, day)) continue;
    const candidate = instantOf(
      {
        year: day.year,
        month: day.month,
        day: rule.repeat === 'monthly' ? Math.min(anchor.day, day.daysInMonth as number) : day.day,
        hour: anchor.hour,
        minute: anchor.minute,
        second: anchor.second,
        millisecond: anchor.millisecond,
      },
      zone,
    );
    if (candidate.getTime() > from.getTime()) return candidate;
  }
  throw new Error(`no ${rule.repeat} occurrence found after ${after.toISOString()}`);
}

/** Whether a date (a zone-less calendar day) can hold an occurrence. */
function matches(rule: RepeatRule, day: DateTime): boolean {
  switch (rule.repeat) {
    case 'daily':
    case 'monthly':
      return true;
    case 'weekdays':
      return day.weekday <= 5;
    case 'weekly':
      return day.weekday === DateTime.fromObject(rule.anchor, { zone: 'UTC' }).weekday;
  }
}
