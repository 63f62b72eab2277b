import { createRequire } from 'node:module';

/**
 * countries-and-timezones: the tz database's country table and zone names, current and
 * deprecated. It ships its types only as an ES module, which this CommonJS build cannot import;
 * its CommonJS entry is loaded and typed here (the functions used).
 */
export const tzDatabase = createRequire(__filename)('countries-and-timezones') as {
  getCountry: (code: string, options?: { deprecated: boolean }) => { timezones: string[] } | null;
  getTimezone: (name: string) => { aliasOf: string | null; countries: string[] } | null;
  getAllTimezones: (options: { deprecated: boolean }) => Record<string, unknown>;
};
