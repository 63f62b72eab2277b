import { nextOccurrence, type ReminderRepeat } from './repeat-schedule';
import type { WallClock } from './local-time';

/** A wall-clock time, e.g. wall('2026-03-07 09:00'). */
function wall(text: string): WallClock {
  const [date = '', time = ''] = text.split(' ');
  const [year, month, day] = date.split('-').map(Number);
  const [hour, minute] = time.split(':').map(Number);
  return {
    year: year as number,
    month: month as number,
    day: day as number,
    hour: hour as number,
    minute: minute as number,
    second: 0,
    millisecond: 0,
  };
}

/** The first `count` occurrences of a rule anchored at `anchor`, as UTC ISO strings. */
function occurrences(repeat: ReminderRepeat, zone: string, anchor: string, count: number): string[] {
  const rule = { repeat, zone, anchor: wall(anchor) };
  const out: Date[] = [];
  let after = new Date(0);
  for (let i = 0; i < count; i++) {
    after = nextOccurrence(rule, after);
    out.push(after);
  }
  return out.map((d) => d.toISOString());
}

describe('daily at 09:00 keeps 09:00 local across the 2026 and 2027 changes', () => {
  it.each([
    // America/New_York: spring forward 2026-03-08, 2027-03-14; fall back 2026-11-01, 2027-11-07.
    ['America/New_York', '2026-03-07 09:00', ['2026-03-07T14:00:00.000Z', '2026-03-08T13:00:00.000Z', '2026-03-09T13:00:00.000Z']],
    ['America/New_York', '2026-10-31 09:00', ['2026-10-31T13:00:00.000Z', '2026-11-01T14:00:00.000Z', '2026-11-02T14:00:00.000Z']],
    ['America/New_York', '2027-03-13 09:00', ['2027-03-13T14:00:00.000Z', '2027-03-14T13:00:00.000Z', '2027-03-15T13:00:00.000Z']],
    ['America/New_York', '2027-11-06 09:00', ['2027-11-06T13:00:00.000Z', '2027-11-07T14:00:00.000Z', '2027-11-08T14:00:00.000Z']],
    // Europe/Lisbon: 2026-03-29, 2026-10-25, 2027-03-28, 2027-10-31.
    ['Europe/Lisbon', '2026-03-28 09:00', ['2026-03-28T09:00:00.000Z', '2026-03-29T08:00:00.000Z', '2026-03-30T08:00:00.000Z']],
    ['Europe/Lisbon', '2026-10-24 09:00', ['2026-10-24T08:00:00.000Z', '2026-10-25T09:00:00.000Z', '2026-10-26T09:00:00.000Z']],
    ['Europe/Lisbon', '2027-03-27 09:00', ['2027-03-27T09:00:00.000Z', '2027-03-28T08:00:00.000Z', '2027-03-29T08:00:00.000Z']],
    ['Europe/Lisbon', '2027-10-30 09:00', ['2027-10-30T08:00:00.000Z', '2027-10-31T09:00:00.000Z', '2027-11-01T09:00:00.000Z']],
    // America/Sao_Paulo: no daylight saving since 2019, -03:00 on the dates it used to change.
    ['America/Sao_Paulo', '2026-10-31 09:00', ['2026-10-31T12:00:00.000Z', '2026-11-01T12:00:00.000Z', '2026-11-02T12:00:00.000Z']],
    ['America/Sao_Paulo', '2027-02-19 09:00', ['2027-02-19T12:00:00.000Z', '2027-02-20T12:00:00.000Z', '2027-02-21T12:00:00.000Z']],
    // Australia/Sydney (southern hemisphere): fall back 2026-04-05, 2027-04-04; spring forward 2026-10-04, 2027-10-03.
    ['Australia/Sydney', '2026-04-04 09:00', ['2026-04-03T22:00:00.000Z', '2026-04-04T23:00:00.000Z', '2026-04-05T23:00:00.000Z']],
    ['Australia/Sydney', '2026-10-03 09:00', ['2026-10-02T23:00:00.000Z', '2026-10-03T22:00:00.000Z', '2026-10-04T22:00:00.000Z']],
    ['Australia/Sydney', '2027-04-03 09:00', ['2027-04-02T22:00:00.000Z', '2027-04-03T23:00:00.000Z', '2027-04-04T23:00:00.000Z']],
    ['Australia/Sydney', '2027-10-02 09:00', ['2027-10-01T23:00:00.000Z', '2027-10-02T22:00:00.000Z', '2027-10-03T22:00:00.000Z']],
  ])('%s from %s', (zone, anchor, expected) => {
    expect(occurrences('daily', zone, anchor, 3)).toEqual(expected);
  });
});

describe('a time in the gap moves forward; a time in the overlap is its first occurrence', () => {
  it.each([
    // 02:30 does not exist on 2026-03-08 in New York: 03:30 EDT that day, 02:30 again after.
    ['America/New_York', '2026-03-07 02:30', ['2026-03-07T07:30:00.000Z', '2026-03-08T07:30:00.000Z', '2026-03-09T06:30:00.000Z']],
    // 01:30 happens twice on 2026-11-01: the first is 01:30 EDT (05:30Z), not 01:30 EST (06:30Z).
    ['America/New_York', '2026-10-31 01:30', ['2026-10-31T05:30:00.000Z', '2026-11-01T05:30:00.000Z', '2026-11-02T06:30:00.000Z']],
    ['America/New_York', '2027-03-13 02:30', ['2027-03-13T07:30:00.000Z', '2027-03-14T07:30:00.000Z', '2027-03-15T06:30:00.000Z']],
    ['America/New_York', '2027-11-06 01:30', ['2027-11-06T05:30:00.000Z', '2027-11-07T05:30:00.000Z', '2027-11-08T06:30:00.000Z']],
    ['Europe/Lisbon', '2026-03-28 01:30', ['2026-03-28T01:30:00.000Z', '2026-03-29T01:30:00.000Z', '2026-03-30T00:30:00.000Z']],
    ['Europe/Lisbon', '2026-10-24 01:30', ['2026-10-24T00:30:00.000Z', '2026-10-25T00:30:00.000Z', '2026-10-26T01:30:00.000Z']],
    ['Europe/Lisbon', '2027-03-27 01:30', ['2027-03-27T01:30:00.000Z', '2027-03-28T01:30:00.000Z', '2027-03-29T00:30:00.000Z']],
    ['Europe/Lisbon', '2027-10-30 01:30', ['2027-10-30T00:30:00.000Z', '2027-10-31T00:30:00.000Z', '2027-11-01T01:30:00.000Z']],
    ['Australia/Sydney', '2026-10-03 02:30', ['2026-10-02T16:30:00.000Z', '2026-10-03T16:30:00.000Z', '2026-10-04T15:30:00.000Z']],
    ['Australia/Sydney', '2026-04-04 02:30', ['2026-04-03T15:30:00.000Z', '2026-04-04T15:30:00.000Z', '2026-04-05T16:30:00.000Z']],
    ['Australia/Sydney', '2027-10-02 02:30', ['2027-10-01T16:30:00.000Z', '2027-10-02T16:30:00.000Z', '2027-10-03T15:30:00.000Z']],
    ['Australia/Sydney', '2027-04-03 02:30', ['2027-04-02T15:30:00.000Z', '2027-04-03T15:30:00.000Z', '2027-04-04T16:30:00.000Z']],
  ])('%s from %s', (zone, anchor, expected) => {
    expect(occurrences('daily', zone, anchor, 3)).toEqual(expected);
  });
});

describe('weekdays, weekly and monthly', () => {
  it('weekdays skip the weekend and keep 08:00 across New York’s 2026 spring change', () => {
    // Friday 2026-03-06, then Monday 2026-03-09 (after the change on Sunday the 8th).
    expect(occurrences('weekdays', 'America/New_York', '2026-03-06 08:00', 3)).toEqual([
      '2026-03-06T13:00:00.000Z',
      '2026-03-09T12:00:00.000Z',
      '2026-03-10T12:00:00.000Z',
    ]);
  });

  it('a weekdays reminder set for a Saturday first fires on Monday', () => {
    expect(occurrences('weekdays', 'America/Sao_Paulo', '2026-11-21 07:00', 2)).toEqual([
      '2026-11-23T10:00:00.000Z',
      '2026-11-24T10:00:00.000Z',
    ]);
  });

  it('weekly keeps its weekday and 09:00 across Lisbon’s 2026 autumn change', () => {
    expect(occurrences('weekly', 'Europe/Lisbon', '2026-10-18 09:00', 3)).toEqual([
      '2026-10-18T08:00:00.000Z',
      '2026-10-25T09:00:00.000Z',
      '2026-11-01T09:00:00.000Z',
    ]);
  });

  it('monthly on the 31st takes the last day of shorter months, and 09:00 across Sydney’s April 2027 change', () => {
    expect(occurrences('monthly', 'Australia/Sydney', '2027-01-31 09:00', 4)).toEqual([
      '2027-01-30T22:00:00.000Z',
      '2027-02-27T22:00:00.000Z',
      '2027-03-30T22:00:00.000Z',
      '2027-04-29T23:00:00.000Z',
    ]);
  });

  it('after downtime, the next occurrence is the first one after now, not one per missed day', () => {
    const rule = { repeat: 'daily' as const, zone: 'America/New_York', anchor: wall('2026-03-01 09:00') };
    expect(nextOccurrence(rule, new Date('2026-03-10T15:00:00Z')).toISOString()).toBe('2026-03-11T13:00:00.000Z');
  });
});
