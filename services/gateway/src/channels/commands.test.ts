import { parseCommand, parseYesNo } from './commands';

describe('parseCommand', () => {
  it('reads /link with its code, normalised', () => {
    expect(parseCommand('/link abcd-2345')).toEqual({ kind: 'link', code: 'ABCD2345' });
    expect(parseCommand('/link')).toEqual({ kind: 'link', code: '' });
    expect(parseCommand(' /NEW ')).toEqual({ kind: 'new' });
  });

  it("reads them with the @bot suffix of Telegram's command menu", () => {
    expect(parseCommand('/link@nexo_test_bot ZHBWV9C9')).toEqual({ kind: 'link', code: 'ZHBWV9C9' });
    expect(parseCommand('/new@nexo_test_bot')).toEqual({ kind: 'new' });
    expect(parseCommand('/new@nexo_test_bot please')).toBeUndefined();
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
