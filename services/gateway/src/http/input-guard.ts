import type { RequestHandler } from 'express';
import { invalidInput } from './errors';

/** docs/api.md#errors: JSON nested deeper than this is refused; no request of ours needs a tenth of it. */
export const MAX_JSON_DEPTH = 64;

type Path = (string | number)[];

interface Problem {
  path: Path;
  message: string;
}

/**
 * The first part of a parsed JSON value the system will not store: nesting past MAX_JSON_DEPTH,
 * a key named `__proto__`, or a NUL character or half of a UTF-16 pair in a string or key
 * (PostgreSQL text and jsonb refuse them). The walk keeps its
 * own stack: a recursive one would overflow on the very input it is meant to refuse.
 */
export function findUnstorable(value: unknown, { allowNul = false } = {}): Problem | undefined {
  const stack: { value: unknown; depth: number; path: Path }[] = [{ value, depth: 1, path: [] }];
  for (let item = stack.pop(); item; item = stack.pop()) {
    const { value: current, depth, path } = item;
    if (typeof current === 'string') {
      if (!allowNul && current.includes('\0')) return { path, message: 'must not contain a NUL character' };
      if (!allowNul && !current.isWellFormed()) return { path, message: 'must be valid Unicode (a lone surrogate)' };
      continue;
    }
    if (current === null || typeof current !== 'object') continue;
    if (depth > MAX_JSON_DEPTH) return { path: path.slice(0, 3), message: `JSON must not be nested deeper than ${MAX_JSON_DEPTH} levels` };
    for (const [key, child] of Object.entries(current)) {
      const childPath = [...path.slice(0, MAX_JSON_DEPTH), Array.isArray(current) ? Number(key) : key];
      if (!allowNul && key.includes('\0')) return { path: childPath, message: 'keys must not contain a NUL character' };
      if (!allowNul && !key.isWellFormed()) return { path: childPath, message: 'keys must be valid Unicode (a lone surrogate)' };
      // JSON.parse makes it a plain key, but the first copy into a new object (a zod parse, a
      // merge) sets that object's prototype instead: it would vanish, or worse. Refused, never dropped.
      if (key === '__proto__') return { path: childPath, message: 'keys must not be "__proto__"' };
      stack.push({ value: child, depth: depth + 1, path: childPath });
    }
  }
  return undefined;
}

/**
 * For every route after the JSON parser: a NUL anywhere in the body, the path or the query, or
 * absurd nesting, answers 400 here, once, instead of a 500 from PostgreSQL or a stack overflow
 * deep in some route.
 */
export const rejectUnstorableInput: RequestHandler = (req, _res, next) => {
  if (/%00/.test(req.originalUrl)) {
    throw invalidInput([], 'the URL must not contain a NUL character');
  }
  const problem = findUnstorable(req.body);
  if (problem) throw invalidInput(problem.path, problem.message);
  next();
};

// C0 controls other than tab, line feed and carriage return, DEL, and the C1 controls.
// eslint-disable-next-line no-control-regex -- matching control characters is the point
const CONTROL_CHARACTER = /[\u0000-\u0008\u000b\u000c\u000e-\u001f\u007f-\u009f]/;
const CONTROL_CHARACTERS = new RegExp(CONTROL_CHARACTER.source, 'g');

/**
 * Text with control characters removed and lone surrogates replaced by U+FFFD (docs/channels.md#message-content: a
 * chat message is cleaned, never refused).
 */
export function withoutControlCharacters(text: string): string {
  return text.replace(CONTROL_CHARACTERS, '').toWellFormed();
}

/**
 * Where each UTF-16 position of `text` lands in withoutControlCharacters(text), for offsets a
 * provider counted in the text as sent (Telegram's entities): the characters kept before it. A
 * U+FFFD takes its lone surrogate's one place, so only removed control characters move anything.
 */
export function cleanedPosition(text: string): (position: number) => number {
  const kept = [0];
  for (let i = 0; i < text.length; i++) kept.push((kept[i] ?? 0) + (CONTROL_CHARACTER.test(text.charAt(i)) ? 0 : 1));
  return (position) => kept[Math.min(Math.max(position, 0), text.length)] ?? 0;
}

/**
 * A provider's webhook body made storable: nesting past MAX_JSON_DEPTH is refused (no real update
 * is a tenth that deep), every string loses its control characters (a person's message, name or
 * caption is cleaned, never refused). Recursion is safe once the depth is known to be bounded.
 */
export function cleanWebhookBody(value: unknown): unknown {
  const problem = findUnstorable(value, { allowNul: true });
  if (problem) throw invalidInput(problem.path, problem.message);
  return clean(value);
}

function clean(value: unknown): unknown {
  if (typeof value === 'string') return withoutControlCharacters(value);
  if (Array.isArray(value)) return value.map(clean);
  if (value === null || typeof value !== 'object') return value;
  return Object.fromEntries(Object.entries(value).map(([key, child]) => [withoutControlCharacters(key), clean(child)]));
}
