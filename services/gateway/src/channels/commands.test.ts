import { parseCommand, parseYesNo } from './commands';

describe('parseCommand', () => {
  it('reads /link with its code, normalised', () => {
    expect(parseCommand('/link abcd-2345')).toEqual({ kind: 'link', code: 'ABCD2345' });
    expect(parseCommand('/link')).toEqual({ kind: 'link', code: '' });
    expect(parseCommand(' /NEW ')).toEqual({ kind: 'new' });
  });

  it('leaves other text alone', () => {
    expect(parseCommand('/newer')).toBeUndefined();
    expect(parseCommand('please /new')).toBeUndefined();
    expect(parseCommand('link me')).toBeUndefined();
  });
});

describe('parseYesNo', () => {
  it.each([
    ['yes', true],
    ['Sim', true],
    ['SIM!', true],
    ['no', false],
    ['não', false],
    ['NAO.', false],
  ])('%p is %p', (text, expected) => {
    expect(parseYesNo(text)).toBe(expected);
  });

  it('is undefined for anything else', () => {
    for (const text of ['yes please', 'nope', 'ok', '']) expect(parseYesNo(text)).toBeUndefined();
  });
});
