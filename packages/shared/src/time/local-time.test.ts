import { describeNow, formatLocal, isTimeZone, normalizeDateTime, parseLocalDateTime, timeZoneSchema } from './local-time';

describe('time zone names', () => {
  it('accepts IANA names, spelled canonically, and refuses the rest', () => {
    expect(isTimeZone('America/Sao_Paulo')).toBe(true);
    expect(isTimeZone('UTC')).toBe(true);
    for (const bad of ['Mars/Olympus_Mons', '+03:00', '', 'America/Sao_Paulo; DROP']) expect(isTimeZone(bad)).toBe(false);
    expect(timeZoneSchema.parse(' america/new_york ')).toBe('America/New_York');
    // Names ICU's list lacks (renamed zones, old aliases) are spelled as the database does, too.
    const spellings = ['asia/kolkata', 'EUROPE/KYIV', 'america/nuuk', 'us/eastern', 'etc/utc', 'asia/ho_chi_minh'];
    expect(spellings.map((name) => timeZoneSchema.parse(name))).toEqual([
      'Asia/Kolkata',
      'Europe/Kyiv',
      'America/Nuuk',
      'US/Eastern',
      'Etc/UTC',
      'Asia/Ho_Chi_Minh',
    ]);
    expect(timeZoneSchema.safeParse('Nowhere/Town').success).toBe(false);
  });
});

describe('local times', () => {
  it('shows an instant in the zone with its name, and the clock line with weekday and offset', () => {
    const instant = new Date('2026-11-23T12:00:00Z');
    expect(formatLocal(instant, 'America/Sao_Paulo')).toBe('2026-11-23 09:00 (America/Sao_Paulo)');
    expect(describeNow(instant, 'Asia/Tokyo')).toBe('Monday, 2026-11-23 21:00 (Asia/Tokyo, UTC+09:00)');
  });

  it('reads a date-time without an offset as local time, and one with an offset as that instant', () => {
    expect(parseLocalDateTime('2026-11-23T09:00:00', 'America/Sao_Paulo')?.instant.toISOString()).toBe('2026-11-23T12:00:00.000Z');
    expect(parseLocalDateTime('2026-11-23T09:00', 'Asia/Tokyo')?.instant.toISOString()).toBe('2026-11-23T00:00:00.000Z');
    const withOffset = parseLocalDateTime('2026-11-23T09:00:00+01:00', 'America/Sao_Paulo');
    expect(withOffset?.instant.toISOString()).toBe('2026-11-23T08:00:00.000Z');
    expect(withOffset?.wall).toMatchObject({ day: 23, hour: 5, minute: 0 });
    // The gap keeps the wall-clock time as written (02:30) while the instant moves forward (03:30 EDT).
    const gap = parseLocalDateTime('2026-03-08T02:30:00', 'America/New_York');
    expect(gap?.wall).toMatchObject({ hour: 2, minute: 30 });
    expect(gap?.instant.toISOString()).toBe('2026-03-08T07:30:00.000Z');
    expect(parseLocalDateTime('2026-02-30T09:00:00', 'UTC')).toBeUndefined();
  });

  it('spells other ISO 8601 forms of a date-time in the extended form, leaving anything else as it is', () => {
    expect(normalizeDateTime('2026-05-01T15:00Z')).toBe('2026-05-01T15:00:00Z');
    expect(normalizeDateTime('2026-05-01T15:00-03:00')).toBe('2026-05-01T15:00:00-03:00');
    expect(normalizeDateTime('2026-05-01T15:00:00-0300')).toBe('2026-05-01T15:00:00-03:00');
    expect(normalizeDateTime('2026-05-01T15:00:30.5+05')).toBe('2026-05-01T15:00:30.5+05:00');
    expect(normalizeDateTime(' 2026-05-01 15:00 ')).toBe('2026-05-01T15:00:00');
    expect(normalizeDateTime('2026-05-01t15:00z')).toBe('2026-05-01T15:00:00Z');
    for (const other of ['2026-05-01', 'tomorrow at 7', '2026-05-01T15', '2026-05-01T15:00+3', '07:00']) {
      expect(normalizeDateTime(other)).toBe(other);
    }
  });
});
