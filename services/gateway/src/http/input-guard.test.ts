import { cleanWebhookBody, findUnstorable, MAX_JSON_DEPTH, withoutControlCharacters } from './input-guard';

const nested = (depth: number): unknown => JSON.parse('['.repeat(depth) + ']'.repeat(depth));

describe('input guard', () => {
  it('accepts nesting up to the limit and refuses one level more', () => {
    expect(findUnstorable(nested(MAX_JSON_DEPTH))).toBeUndefined();
    expect(findUnstorable(nested(MAX_JSON_DEPTH + 1))?.message).toMatch(/nested deeper than 64/);
  });

  it('walks absurd nesting without overflowing the stack', () => {
    expect(findUnstorable(nested(200_000))?.message).toMatch(/nested/);
  });

  it('finds a NUL or a lone surrogate in a string or a key, at any depth', () => {
    expect(findUnstorable({ a: [{ b: 'x\u0000y' }] })).toEqual({ path: ['a', 0, 'b'], message: 'must not contain a NUL character' });
    expect(findUnstorable({ 'k\u0000': 1 })?.message).toMatch(/keys/);
    expect(findUnstorable({ text: 'tab\tand\nnew line, emoji 🙂' })).toBeUndefined();
    expect(findUnstorable({ text: 'half \ud83d pair' })?.message).toMatch(/lone surrogate/);
    expect(findUnstorable({ settings: { 'half \udc00 pair': 1 } })).toEqual({
      path: ['settings', 'half \udc00 pair'],
      message: 'keys must be valid Unicode (a lone surrogate)',
    });
  });

  it('finds a key named __proto__ at any depth, as JSON.parse keeps it; constructor and prototype are plain keys', () => {
    expect(findUnstorable(JSON.parse('{"settings":{"a":[{"__proto__":{"x":1}}]}}'))).toEqual({
      path: ['settings', 'a', 0, '__proto__'],
      message: 'keys must not be "__proto__"',
    });
    expect(findUnstorable(JSON.parse('{"__proto__":1}'), { allowNul: true })?.path).toEqual(['__proto__']);
    expect(findUnstorable({ settings: { constructor: { prototype: 1 } } })).toBeUndefined();
  });

  it('cleans control characters from a webhook body but keeps line breaks', () => {
    expect(withoutControlCharacters('a\u0000b\u0007c\td\ne\u009f🙂\ud83d')).toBe('abc\td\ne🙂\uFFFD');
    expect(cleanWebhookBody({ message: { text: 'hi\u0000 there', n: 1, ok: true, none: null } })).toEqual({
      message: { text: 'hi there', n: 1, ok: true, none: null },
    });
  });

  it('refuses a webhook body nested past the limit with a 400', () => {
    expect(() => cleanWebhookBody({ a: nested(MAX_JSON_DEPTH) })).toThrow(expect.objectContaining({ status: 400 }));
  });
});
