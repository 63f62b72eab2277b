import { createRequire } from 'node:module';
import { findFromIsoCode } from 'city-timezones';
import { parsePhoneNumberFromString } from 'libphonenumber-js';

// countries-and-timezones ships its types only as an ES module, which this CommonJS build cannot
// import; its CommonJS entry is loaded and typed here (the one function used).
const { getCountry } = createRequire(__filename)('countries-and-timezones') as {
  getCountry: (code: string) => { timezones: string[] } | null;
};

/**
 * Regions libphonenumber names that the tz database's country table lacks (not ISO 3166-1
 * countries), with the country whose zones they keep: Kosovo (+383) Serbia's, Ascension (+247)
 * and Tristan da Cunha (+290 8) Saint Helena's.
 */
const ZONE_COUNTRY: Readonly<Record<string, string>> = { XK: 'RS', AC: 'SH', TA: 'SH' };

/**
 * The time zone of a new WhatsApp user (docs/channels.md#time-zones), from their number's country: libphonenumber
 * finds the country, countries-and-timezones (the tz database's country table) its zones. A country
 * with several zones gets the most populous one: the zone whose cities, in city-timezones'
 * Natural Earth data, have the most inhabitants together (New York for the US, Sao Paulo for
 * Brazil, Sydney for Australia). Undefined when the number names no country we know.
 */
export function timeZoneForPhone(waId: string): string | undefined {
  const region = parsePhoneNumberFromString(`+${waId.replace(/^\+/, '')}`)?.country;
  const country = region ? (ZONE_COUNTRY[region] ?? region) : undefined;
  const zones = country ? getCountry(country)?.timezones : undefined;
  if (!country || !zones || zones.length === 0) return undefined;
  if (zones.length === 1) return zones[0];
  return mostPopulous(country, zones) ?? zones[0];
}

/** Memoised per country: the city table is scanned once for each. */
const populousCache = new Map<string, string | undefined>();

function mostPopulous(country: string, zones: readonly string[]): string | undefined {
  if (populousCache.has(country)) return populousCache.get(country);
  const population = new Map<string, number>();
  for (const city of findFromIsoCode(country)) {
    if (city.iso2 === country && zones.includes(city.timezone)) {
      population.set(city.timezone, (population.get(city.timezone) ?? 0) + city.pop);
    }
  }
  const best = [...population.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  populousCache.set(country, best);
  return best;
}
