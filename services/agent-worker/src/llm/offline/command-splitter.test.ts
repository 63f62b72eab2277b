import type { ChatRequest, ToolDefinitionForModel } from '../chat-model';
import { MAX_OFFLINE_CALLS, OFFLINE_HELP, OFFLINE_HELP_PT, OfflinePlanner } from '../offline.planner';
import { splitCommands } from './command-splitter';

const LENGTH = 16_000;
const repeatTo = (unit: string, length = LENGTH) => unit.repeat(Math.ceil(length / unit.length)).slice(0, length);
const tools: ToolDefinitionForModel[] = [
  'create_folder',
  'create_document',
  'rename_folder',
  'save_habit',
  'create_reminder',
  'remember',
  'search_documents',
].map((name) => ({ name, description: name, parameters: { type: 'object' } }));

async function plan(content: string) {
  const request: ChatRequest = {
    model: 'offline',
    messages: [{ role: 'user', content }],
    tools,
    onToken: () => undefined,
    timezone: 'America/Sao_Paulo',
  };
  return new OfflinePlanner({ now: () => new Date('2026-11-23T13:00:00Z') }).complete(request);
}

describe('splitCommands', () => {
  it.each<[string, string[]]>([
    ['create folder A and create folder B', ['create folder A', 'create folder B']],
    [
      'criar pasta A e depois criar pasta B; list habits\nremember that x',
      ['criar pasta A', 'criar pasta B', 'list habits', 'remember that x'],
    ],
    ['create habit rock and roll', ['create habit rock and roll']],
    ['create folder A, list habits', ['create folder A', 'list habits']],
    ['criar pasta A depois listar hábitos', ['criar pasta A', 'listar hábitos']],
    ['create folder A, then list habits', ['create folder A', 'list habits']],
    ['create folder Reports, Work', ['create folder Reports, Work']],
    ['create habit read then write', ['create habit read then write']],
    ['Please, create folder A, please, list habits', ['create folder A', 'list habits']],
    ['create folder A\r\ncreate folder B\u2028create folder C', ['create folder A', 'create folder B', 'create folder C']],
    [
      'please create folder A, please; create folder "B; and create folder C"',
      ['create folder A', 'create folder "B; and create folder C"'],
    ],
    ['  ;\n\n ; create folder A  !?', ['create folder A']],
    ['create folder A ;) ; create folder B;-)', ['create folder A', 'create folder B']],
  ])('%j', (message, pieces) => {
    expect(splitCommands(message).map((piece) => piece.raw)).toEqual(pieces);
  });
});

// The old planner took tens of seconds or more on these (a search over every way to cut a
// chain, and regular expressions that backtracked over long runs). Nothing here measures time:
// the generous timeout only keeps a regression from hanging the suite.
describe('pathological messages of 16,000 characters', () => {
  jest.setTimeout(60_000);

  it('plans the first ten commands of a long chain and says the rest was left out', async () => {
    for (const unit of [
      'create folder a and ',
      'criar pasta a e ',
      'create folder a; ',
      'create folder a\n',
      'remember that x and then ',
    ]) {
      const message = repeatTo(unit).replace(/\s+\S*$/, '');
      const response = await plan(message);
      expect(response.toolCalls).toHaveLength(MAX_OFFLINE_CALLS);
      // In the language of the chain: "criar pasta" is Portuguese.
      expect(response.content).toMatch(
        new RegExp(`^(?:Only the first|Só os primeiros) ${MAX_OFFLINE_CALLS} (?:of your|dos seus) \\d+ (?:commands|comandos)`),
      );
    }
  });

  it.each<[string, string]>([
    ['a chain whose last piece is no command', `${repeatTo('create folder a and ')}sing`],
    ['a run of spaces', `create folder${' '.repeat(LENGTH)}`],
    // Each lazy name once matched a run of spaces inside it again from every one of its spaces.
    ['a run of spaces inside a name', `create document a${' '.repeat(LENGTH)}b`],
    ['a run of tabs and spaces inside a name', `rename folder a${repeatTo(' \t')}b to c`],
    ['spaces before a word that is no command', `hello${' '.repeat(LENGTH)}x`],
    ['commas and spaces', `please${repeatTo(', ')}`],
    ['commas and "then" without a command', `create folder a${repeatTo(' , then')}`],
    ['polite commas before a command', `${repeatTo('please, ')}create folder a`],
    ['polite words and no command', repeatTo('can you, please, ')],
    ['greetings before a command and thanks after it', `${repeatTo('hi! ')}create folder a, thanks`],
    ['thanks only', repeatTo(', thanks')],
    ['opening quotes without closing ones', repeatTo('“')],
    ['guillemets without closing ones', repeatTo('«')],
    ['emoji and spaces', `create folder a${repeatTo(' 👍🏽')}`],
    ['emoticons', `create folder a${repeatTo(' ;)')}`],
    ['emoticons without spaces', `create folder a${repeatTo(';-)')}`],
    ['straight quotes', `create folder ${repeatTo('"a')}`],
    ['articles without a noun', `create${repeatTo(' a')}`],
    ['"and" between words that start nothing', repeatTo('e and ')],
    ['keywords of an optional part', `create document a${repeatTo(' in a')} with content`],
    ['separator keywords with nothing after', `rename folder a${repeatTo(' to')}`],
    ['joining words only', `remember that${repeatTo(' that')}`],
    ['content keywords only', `create document${repeatTo(' with content')}`],
    ['a reminder full of times', `remind me ${repeatTo('at 9 ')}`],
    ['a reminder of many words and one time', `me lembra de ${repeatTo('ligar ')} às 15h`],
    ['line separators only', repeatTo('\r\u2028')],
    ['"what is in" without a folder', repeatTo('create folder a and what is in the ')],
    ['many words before "folder"', `what is in ${repeatTo('x ')} folder`],
  ])('answers %s', async (_, message) => {
    const response = await plan(message);
    expect(response.toolCalls.length).toBeLessThanOrEqual(MAX_OFFLINE_CALLS);
    if (response.toolCalls.length === 0) expect(response.content).toMatch(message.startsWith('me lembra') ? OFFLINE_HELP_PT : OFFLINE_HELP);
  });
});
