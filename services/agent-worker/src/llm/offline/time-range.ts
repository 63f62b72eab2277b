import { ParsingComponents, type ParsedResult } from 'chrono-node';

export type Span = readonly [number, number];

// The words that open a range: "from 3pm to 4pm", "between 3 and 4", "das 15h às 16h", "entre 15h e 16h"
// (chrono takes some of them into its time: "das 15:00").
const OPENING = '(?:from|between|de|das|desde|entre)';
const OPENER = new RegExp(String.raw`(?<![\p{L}\p{N}])${OPENING}\s+$`, 'iu');
const OPENED = new RegExp(String.raw`^${OPENING}\s`, 'iu');
// What joins its two ends; nothing when the second end brings its own "às" ("das 15h às 16h").
// Both test the gap between the ends trimmed, so no pattern backtracks over a run of spaces.
const JOIN = /^(?:to|till|until|through|and|a|ate|até|e)?$/iu;
const DASH = /^[-–—]$/u;

// A range whose first hour is a bare number, which chrono does not read as a time: "between 3 and
// 4pm", "entre 3 e 4 da tarde". Tried on the few characters before the end's result only.
const BARE_START = new RegExp(
  String.raw`(?<![\p{L}\p{N}])${OPENING}\s+([01]?\d|2[0-3])(?::([0-5]\d))?\s*(?:to|till|until|and|a|ate|até|e|-|–|—)\s+$`,
  'iu',
);

// The bare last hour of a range after a time chrono read: "between 9:30 and 11", "das 9h30 às 11".
const BARE_END = /^\s*(?:to|till|until|and|a|ate|até|e|às|as|-|–|—)\s*(?:[01]?\d|2[0-3])(?::[0-5]\d)?(?![\p{L}\p{N}:])/iu;

/**
 * The span of the time phrase that starts at `start`, taking in a range it opens: a reminder of a
 * range is set at its start, and neither end is left in its text. chrono joins some ranges on its
 * own ("from 3pm to 4pm"); the others are two results, joined here. A start without a part of the
 * day takes the end's ("das 3 às 4 da tarde" starts at 15:00).
 */
export function timeRangeSpan(raw: string, results: ParsedResult[], start: ParsedResult): Span {
  const from = start.index;
  const to = from + start.text.length;
  const bare = start.end ? null : BARE_START.exec(raw.slice(Math.max(0, from - 24), from));
  if (bare && start.start instanceof ParsingComponents) {
    const hour = Number(bare[1]);
    const late = hour < 12 && hour + 12 < (start.start.get('hour') ?? 0);
    start.start.assign('hour', late ? hour + 12 : hour);
    start.start.assign('minute', Number(bare[2] ?? 0));
    return [from - bare[0].length, to];
  }
  const opener = OPENER.exec(raw.slice(Math.max(0, from - 12), from));
  const opened = opener !== null || OPENED.test(start.text);
  const next = start.end ? undefined : results.find((result) => result.index >= to);
  const gap = next ? raw.slice(to, next.index).trim() : '';
  const end = next?.start.isCertain('hour') && (DASH.test(gap) || (opened && JOIN.test(gap))) ? next : undefined;
  if (!end) {
    const bareEnd = opened ? BARE_END.exec(raw.slice(to, to + 16)) : null;
    return [opener ? from - opener[0].length : from, to + (bareEnd?.[0].length ?? 0)];
  }
  const hour = start.start.get('hour') ?? 0;
  const late = hour < 12 && !start.start.isCertain('meridiem') && hour + 12 < (end.start.get('hour') ?? 0);
  if (late && start.start instanceof ParsingComponents) start.start.assign('hour', hour + 12);
  return [opener ? from - opener[0].length : from, end.index + end.text.length];
}
