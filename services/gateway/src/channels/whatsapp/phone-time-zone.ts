import { findFromIsoCode } from 'city-timezones';
import { parsePhoneNumberFromString } from 'libphonenumber-js';
import { tzDatabase } from '@assistant/shared';
import { bsuidCountry } from './whatsapp.schemas';

const { getCountry, getTimezone } = tzDatabase;

/**
 * Regions libphonenumber names (and Kosovo's user-assigned ISO code, which a BSUID may carry) that
 * the tz database's country table lacks, with the country whose zones they keep: Kosovo (+383)
 * Serbia's, Ascension (+247) and Tristan da Cunha (+290 8) Saint Helena's.
 */
const ZONE_COUNTRY: Readonly<Record<string, string>> = { XK: 'RS', AC: 'SH', TA: 'SH' };

/**
 * The time zone of a new WhatsApp user (docs/channels.md#time-zones), from the country of their
 * number or, for a user who hides their number, of their BSUID; undefined when neither tells one.
 * A BSUID's country gives a zone only when it has a single one: a user who chose to hide their
 * number gets no guess at where in their country they live.
 */
export function timeZoneForWhatsApp(id: string): string | undefined {
  const country = bsuidCountry(id);
  if (country === undefined) return timeZoneForPhone(id);
  const found = countryZones(country);
  const zone = found?.zones.length === 1 ? found.zones[0] : undefined;
  return found && zone ? ownName(found.country, zone) : undefined;
}

/**
 * The zone of a phone number's country: libphonenumber finds the country, countries-and-timezones
 * (the tz database's country table) its zones. A country with several zones gets the most
 * populous one: the zone whose cities, in city-timezones' Natural Earth data, have the most
 * inhabitants together (New York for the US, Sao Paulo for Brazil, Sydney for Australia).
 * Undefined when the number names no country we know.
 */
function timeZoneForPhone(waId: string): string | undefined {
  const number = parsePhoneNumberFromString(`+${waId.replace(/^\+/, '')}`);
  // A number in a range libphonenumber does not know (a range opened since its release, a made-up
  // +44 7700 900…) still has its calling code, whose main country comes first.
  const region = number?.country ?? number?.getPossibleCountries()[0];
  const found = region ? countryZones(region) : undefined;
  if (!found) return undefined;
  const zone = found.zones.length === 1 ? found.zones[0] : (mostPopulous(found.country, found.zones) ?? found.zones[0]);
  return zone && ownName(found.country, zone);
}

/**
 * The zone by the name its country knows it: the tz database's country table names a zone kept
 * by several countries after one of them (Sweden's and Norway's Europe/Berlin, Iceland's
 * Africa/Abidjan); the country's own alias of it (Europe/Stockholm), the same clock, is used
 * instead. The first by name when it has two (Mali's Africa/Bamako over Africa/Timbuktu).
 */
function ownName(country: string, zone: string): string {
  if (getTimezone(zone)?.countries[0] === country) return zone;
  const own = getCountry(country, { deprecated: true })?.timezones.find((name) => {
    const alias = getTimezone(name);
    return alias?.aliasOf === zone && alias.countries.length === 1 && name.includes('/');
  });
  return own ?? zone;
}

/** A region's country in the tz database's table and its zones; undefined when it has none. */
function countryZones(region: string): { country: string; zones: string[] } | undefined {
  const country = ZONE_COUNTRY[region] ?? region;
  const zones = getCountry(country)?.timezones;
  return zones && zones.length > 0 ? { country, zones } : undefined;
}

/** Memoised per country: the city table is scanned once for each. */
const populousCache = new Map<string, string | undefined>();

function mostPopulous(country: string, zones: readonly string[]): string | undefined {
  if (populousCache.has(country)) return populousCache.get(country);
  const population = new Map<string, number>();
  for (const city of findFromIsoCode(country)) {
    // The city table may name a zone by an old alias (Nuuk's America/Godthab, Kuala Lumpur's): counted under the zone it names.
    const zone = getTimezone(city.timezone)?.aliasOf ?? city.timezone;
    if (city.iso2 === country && zones.includes(zone)) population.set(zone, (population.get(zone) ?? 0) + city.pop);
  }
  const best = [...population.entries()].sort((a, b) => b[1] - a[1])[0]?.[0];
  populousCache.set(country, best);
  return best;
}
