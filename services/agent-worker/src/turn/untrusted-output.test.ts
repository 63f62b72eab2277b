import { getTool } from '@assistant/shared';
import { boundedTokens, nestingDepth, OUTPUT_LIMITS, parseUntrustedArguments, screenContent, screenToolCalls } from './untrusted-output';

const problemOf = (text: string) => {
  const parsed = parseUntrustedArguments(text);
  return 'problem' in parsed ? parsed.problem : undefined;
};

describe('untrusted model output', () => {
  it('accepts a JSON object, and an empty text as no arguments', () => {
    expect(parseUntrustedArguments('{"name":"Work","n":[1,{"a":2}]}')).toEqual({ args: { name: 'Work', n: [1, { a: 2 }] } });
    expect(parseUntrustedArguments('  ')).toEqual({ args: {} });
  });

  it.each([
    ['invalid JSON', '{"name": "Work"', /not valid JSON/],
    ['an array', '[1, 2]', /not a JSON object/],
    ['a string', '"Work"', /not a JSON object/],
    ['null', 'null', /not a JSON object/],
    ['an escaped NUL', '{"name":"a\\u0000b"}', /NUL/],
    ['a NUL in a key', '{"a\\u0000":1}', /NUL/],
    ['a lone surrogate', '{"name":"\\ud800"}', /broken Unicode/],
    ['deep nesting', `{"a":${'['.repeat(65)}${']'.repeat(65)}}`, /deeper than 64/],
    ['over 64 KiB', JSON.stringify({ text: 'x'.repeat(OUTPUT_LIMITS.argumentBytes) }), /over the limit/],
  ])('refuses %s', (_what, text, problem) => {
    expect(problemOf(text)).toMatch(problem);
  });

  it('measures nesting in linear time without being fooled by brackets inside strings', () => {
    expect(nestingDepth('{"a":"[[[[{{{{","b":[{"c":"\\"]"}]}')).toBe(3);
    const deep = '['.repeat(200_000) + ']'.repeat(200_000);
    expect(nestingDepth(deep)).toBe(200_000);
    expect(problemOf(deep)).toMatch(/over the limit/);
  });

  it('keeps every call but bounds names, ids and arguments, and marks calls past the cap as not run', () => {
    const calls = screenToolCalls(
      [
        { id: 'a', name: 'create_folder', arguments: '{"name":"Work"}' },
        { id: 'd'.repeat(1_000), name: 'list_habits', arguments: 'x'.repeat(5_000_000) },
        { id: 'c', name: `drop_${'x'.repeat(500)}`, arguments: '{}' },
        { id: 'a', name: 'list_goals', arguments: '{}' },
        { id: 'e', name: 'list_goals', arguments: '{}' },
      ],
      2,
      2,
      (name) => getTool(name) !== undefined,
    );
    expect(calls.map((call) => call.id)).toEqual(['a', 'call_2_2', 'c', 'call_2_4', 'e']);
    expect(calls[0]).toEqual({ id: 'a', name: 'create_folder', arguments: '{"name":"Work"}', args: { name: 'Work' } });
    expect(calls[1]).toMatchObject({ arguments: '{}', problem: expect.stringMatching(/over the limit/) });
    expect(calls[2]?.name.length).toBe(OUTPUT_LIMITS.nameChars);
    expect(calls[2]?.problem).toMatch(/no tool named/);
    // Refused calls do not count against the cap: the fourth call runs, the fifth does not.
    expect(calls[3]).toMatchObject({ args: {} });
    expect(calls[4]).toMatchObject({ name: 'list_goals', arguments: '{}', notRun: true });
    expect(JSON.stringify(calls).length).toBeLessThan(2_000);
  });

  it("counts a refused call of a known tool toward its gotchas without the model's text, and one of an unknown tool not at all", () => {
    const known = (name: string) => getTool(name) !== undefined;
    const [broken, unknown] = screenToolCalls(
      [
        { id: 'a', name: 'create_document', arguments: '{"title": "Diário íntimo", "content": ' },
        { id: 'b', name: 'fly_to_moon', arguments: '{}' },
      ],
      1,
      5,
      known,
    );
    expect(broken).toMatchObject({ problem: expect.stringContaining('Diário íntimo'), mistake: 'The arguments were not valid JSON.' });
    expect(unknown?.problem).toMatch(/no tool named/);
    expect(unknown?.mistake).toBeUndefined();
  });

  it('gives a call whose id the conversation already shows a new one that is not taken either', () => {
    const known = (name: string) => getTool(name) !== undefined;
    const calls = screenToolCalls(
      [
        { id: 'call_0', name: 'list_habits', arguments: '{}' },
        { id: '', name: 'list_goals', arguments: '{}' },
        { id: 'fresh', name: 'list_goals', arguments: '{}' },
      ],
      1,
      20,
      known,
      ['call_0', 'call_1_1', 'call_1_2'],
    );
    expect(calls.map((call) => call.id)).toEqual(['call_1_1_2', 'call_1_2_2', 'fresh']);
  });

  it('stores answers without NUL and within a bound', () => {
    expect(screenContent('hel\u0000lo')).toBe('hello');
    const long = screenContent('y'.repeat(OUTPUT_LIMITS.contentChars * 3));
    expect(long.length).toBeLessThan(OUTPUT_LIMITS.contentChars + 200);
    expect(long).toMatch(/was cut/);
  });

  it('streams what is stored of an answer: no NUL, and past the limit the note of the cut once', async () => {
    const sent: string[] = [];
    const onToken = boundedTokens(async (delta) => {
      sent.push(delta);
    });
    const deltas = ['a\u0000b', ...Array.from({ length: 5 }, () => 'z'.repeat(OUTPUT_LIMITS.contentChars / 2))];
    for (const delta of deltas) await onToken(delta);
    expect(sent.join('')).toBe(screenContent(deltas.join('')));
    expect(sent).toHaveLength(3);
  });
});
