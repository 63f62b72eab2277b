import { timeZoneForPhone } from './phone-time-zone';

describe('timeZoneForPhone', () => {
  it.each([
    ['5511987654321', 'America/Sao_Paulo'], // Brazil: several zones, Sao Paulo the most populous
    ['351912345678', 'Europe/Lisbon'], // Portugal: Lisbon over Madeira and the Azores
    ['12125550123', 'America/New_York'], // United States
    ['14165550123', 'America/Toronto'], // Canada, told apart from the US by libphonenumber
    ['61412345678', 'Australia/Sydney'],
    ['819012345678', 'Asia/Tokyo'], // Japan: one zone
    ['4915112345678', 'Europe/Berlin'],
    ['38344123456', 'Europe/Belgrade'], // Kosovo: its own calling code, no row of its own in the tz country table
    ['2476001', 'Africa/Abidjan'], // Ascension: Saint Helena's zone (UTC all year)
  ])('%s is in %s', (number, zone) => {
    expect(timeZoneForPhone(number)).toBe(zone);
  });

  it('knows no zone for a number without a country', () => {
    expect(timeZoneForPhone('999')).toBeUndefined();
    expect(timeZoneForPhone('')).toBeUndefined();
  });
});
