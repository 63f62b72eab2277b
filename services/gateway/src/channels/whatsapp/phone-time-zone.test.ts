import { timeZoneForWhatsApp } from './phone-time-zone';

describe('timeZoneForWhatsApp', () => {
  it.each([
    ['5511987654321', 'America/Sao_Paulo'], // Brazil: several zones, Sao Paulo the most populous
    ['351912345678', 'Europe/Lisbon'], // Portugal: Lisbon over Madeira and the Azores
    ['12125550123', 'America/New_York'], // United States
    ['14165550123', 'America/Toronto'], // Canada, told apart from the US by libphonenumber
    ['447700900123', 'Europe/London'], // a range libphonenumber holds for no one (Ofcom's, for drama): +44's main country
    ['15555550123', 'America/New_York'], // likewise +1's
    ['61412345678', 'Australia/Sydney'],
    ['819012345678', 'Asia/Tokyo'], // Japan: one zone
    ['4915112345678', 'Europe/Berlin'],
    ['299321000', 'America/Nuuk'], // Greenland: its capital's zone, which the city table names by its alias America/Godthab
    ['60123456789', 'Asia/Kuala_Lumpur'], // Malaysia: the peninsula's zone over Kuching's, by its own name (the table's is Asia/Singapore)
    ['38344123456', 'Europe/Belgrade'], // Kosovo: its own calling code, no row of its own in the tz country table
    ['2476001', 'Atlantic/St_Helena'], // Ascension: Saint Helena's zone (UTC all year)
    ['46701234567', 'Europe/Stockholm'], // Sweden: its own name for the zone the tz country table calls Europe/Berlin
    ['3546123456', 'Atlantic/Reykjavik'], // Iceland: not Africa/Abidjan
    ['96551234567', 'Asia/Kuwait'], // Kuwait: not Asia/Riyadh
    ['385911234567', 'Europe/Zagreb'], // Croatia: not Europe/Belgrade
    ['12423571234', 'America/Nassau'], // the Bahamas: not America/Toronto
  ])('%s is in %s', (number, zone) => {
    expect(timeZoneForWhatsApp(number)).toBe(zone);
  });

  it('knows no zone for a number without a country', () => {
    expect(timeZoneForWhatsApp('999')).toBeUndefined();
    expect(timeZoneForWhatsApp('')).toBeUndefined();
  });

  it.each([
    ['JP.1502576394655843', 'Asia/Tokyo'],
    ['FR.ENT.11815799212886844830', 'Europe/Paris'], // a parent BSUID
    ['XK.1502576394655843', 'Europe/Belgrade'], // Kosovo keeps Serbia's zone
  ])("a BSUID's country with one zone gives it: %s is in %s", (bsuid, zone) => {
    expect(timeZoneForWhatsApp(bsuid)).toBe(zone);
  });

  it('knows no zone for a BSUID whose country has several, or none we know', () => {
    // Portugal and Germany too: the tz table also lists Madeira and the Azores, and Busingen.
    for (const bsuid of ['BR.1502576394655843', 'US.ENT.11815799212886844830', 'PT.42', 'DE.42', 'ZZ.42']) {
      expect(timeZoneForWhatsApp(bsuid)).toBeUndefined();
    }
  });
});
