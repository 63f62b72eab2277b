import { nameKey, sliceText, splitText, storableText, stripUuids } from './text';

describe('nameKey', () => {
  it.each([
    ['Meditação', 'meditacao'],
    ['  MEDITAÇÃO  guiada ', 'meditacao guiada'],
    ['Café', 'cafe'],
    ['Ofﬁce ＲＥＵＮＩÃＯ', 'office reuniao'],
    ['Work\u200B\u00A0 Plan\uFEFF', 'work plan'],
  ])('folds %p to %p', (input, expected) => {
    expect(nameKey(input)).toBe(expected);
  });
});

describe('stripUuids', () => {
  it('replaces every UUID in a text', () => {
    expect(stripUuids('a 3f2b8c1e-9d4a-4b7e-8f00-1234567890ab b 3F2B8C1E-9D4A-4B7E-8F00-1234567890AB')).toBe('a [hidden id] b [hidden id]');
  });
});

describe('storableText', () => {
  it('drops NUL characters and replaces lone surrogate halves, keeping pairs', () => {
    expect(storableText('a\u0000b \ud800 \udc00 😀')).toBe('ab \uFFFD \uFFFD 😀');
  });
});

const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;

describe('splitText', () => {
  it('keeps short text whole', () => {
    expect(splitText('hello', 10)).toEqual(['hello']);
  });

  it('splits long text at word breaks under the limit, losing nothing but the break', () => {
    const text = Array.from({ length: 500 }, (_, i) => `word${i}`).join(' ');
    const parts = splitText(text, 100);
    expect(parts.every((part) => part.length <= 100)).toBe(true);
    expect(parts.join(' ')).toBe(text);
  });

  it('never cuts an emoji in half when a run without breaks must be cut', () => {
    const text = '😀'.repeat(120);
    const parts = splitText(text, 101);
    expect(parts.every((part) => part.length <= 101 && !LONE_SURROGATE.test(part))).toBe(true);
    expect(parts.join('')).toBe(text);
  });

  it('never cuts through an emoji made of several characters (skin tone, family, keycap)', () => {
    for (const emoji of ['👍🏽', '👨‍👩‍👧', '1️⃣']) {
      for (const text of [emoji.repeat(120), `a${emoji.repeat(120)}`, `ab${emoji.repeat(120)}`]) {
        const parts = splitText(text, 101);
        for (const part of parts) expect(part.replace(/^ab?/, '').split(emoji).join('')).toBe('');
        expect(parts.join('')).toBe(text);
      }
    }
  });
});

describe('sliceText', () => {
  it('slices as String.slice, but a cut inside an emoji drops the whole emoji', () => {
    expect(sliceText('abcdef', 1, 4)).toBe('bcd');
    expect(sliceText('a😀b', 0, 2)).toBe('a');
    expect(sliceText('a😀b', 2)).toBe('b');
    expect(sliceText('a😀b', 0, 3)).toBe('a😀');
    expect(sliceText('a😀b', 1)).toBe('😀b');
    expect(sliceText('😀', 1, 1)).toBe('');
  });
});
