import { getTool, parseToolArgs } from '@assistant/shared';
import type { ChatMessage, ChatRequest, ChatResponse, ToolDefinitionForModel } from './chat-model';
import { OFFLINE_HELP, OFFLINE_HELP_PT, OfflinePlanner } from './offline.planner';
import { OFFLINE_TEXTS } from './offline/help-text';

const TOOL_NAMES = [
  'create_folder',
  'create_document',
  'rename_folder',
  'rename_document',
  'move_document',
  'delete_folder',
  'delete_document',
  'get_folder_contents',
  'search_documents',
  'save_habit',
  'update_habit',
  'delete_habit',
  'list_habits',
  'create_reminder',
  'list_reminders',
  'delete_reminder',
  'create_goal',
  'list_goals',
  'delete_goal',
  'remember',
];
const tool = (name: string): ToolDefinitionForModel => ({ name, description: name, parameters: { type: 'object' } });
const ALL_TOOLS = TOOL_NAMES.map(tool);

const NOW = new Date('2025-01-15T10:00:00Z');

function request(messages: ChatMessage[] | string, overrides: Partial<ChatRequest> = {}) {
  const tokens: string[] = [];
  const req: ChatRequest = {
    model: 'offline',
    messages: typeof messages === 'string' ? [{ role: 'user', content: messages }] : messages,
    tools: ALL_TOOLS,
    onToken: (delta) => {
      tokens.push(delta);
    },
    ...overrides,
  };
  return { req, tokens };
}

async function plan(text: string, overrides: Partial<ChatRequest> = {}) {
  const { req, tokens } = request(text, overrides);
  const response = await new OfflinePlanner({ now: () => NOW }).complete(req);
  return { response, tokens };
}

/** The calls' names and arguments, each checked by its tool's own schema, as the tool worker will. */
function toolCalls(response: ChatResponse): Array<[string, Record<string, unknown>]> {
  return response.toolCalls.map((call) => {
    const args = JSON.parse(call.arguments) as Record<string, unknown>;
    const spec = getTool(call.name);
    expect(spec && parseToolArgs(spec, args).error).toBeUndefined();
    return [call.name, args];
  });
}

/** The help text in either language; which one a message gets is tested under "in Portuguese". */
function expectHelp(response: ChatResponse): void {
  expect(response.toolCalls).toEqual([]);
  expect([OFFLINE_HELP, OFFLINE_HELP_PT]).toContain(response.content);
}

async function callsFor(text: string): Promise<Array<[string, Record<string, unknown>]>> {
  return toolCalls((await plan(text)).response);
}

describe('OfflinePlanner', () => {
  it('is named offline', () => {
    expect(new OfflinePlanner().name).toBe('offline');
  });

  describe('chaining', () => {
    it.each<[string, Array<[string, Record<string, unknown>]>]>([
      [
        'create folder Work; create document Notes in Work',
        [
          ['create_folder', { name: 'Work' }],
          ['create_document', { title: 'Notes', folder_id: 'Work' }],
        ],
      ],
      [
        'create folder Work\ncreate folder Home\n',
        [
          ['create_folder', { name: 'Work' }],
          ['create_folder', { name: 'Home' }],
        ],
      ],
      [
        'create folder Work and then list folder Work',
        [
          ['create_folder', { name: 'Work' }],
          ['get_folder_contents', { folder_id: 'Work' }],
        ],
      ],
      [
        'create habit yoga and list habits',
        [
          ['save_habit', { name: 'yoga' }],
          ['list_habits', {}],
        ],
      ],
      [
        'criar pasta Trabalho e depois criar documento Notas em Trabalho',
        [
          ['create_folder', { name: 'Trabalho' }],
          ['create_document', { title: 'Notas', folder_id: 'Trabalho' }],
        ],
      ],
      [
        'criar hábito yoga e meditação e listar hábitos',
        [
          ['save_habit', { name: 'yoga e meditação' }],
          ['list_habits', {}],
        ],
      ],
      [
        'criar pasta A e criar pasta B e criar pasta C',
        [
          ['create_folder', { name: 'A' }],
          ['create_folder', { name: 'B' }],
          ['create_folder', { name: 'C' }],
        ],
      ],
      [
        'please create folder Work; por favor criar pasta Casa.',
        [
          ['create_folder', { name: 'Work' }],
          ['create_folder', { name: 'Casa' }],
        ],
      ],
    ])('%j', async (text, expected) => {
      expect(await callsFor(text)).toEqual(expected);
    });

    it.each<[string, Record<string, unknown>]>([
      ['criar hábito yoga e meditação', { name: 'yoga e meditação' }],
      ['create habit rock and roll', { name: 'rock and roll' }],
      ['create habit read and then write', { name: 'read and then write' }],
    ])('does not split %p: the pieces are not all commands', async (text, args) => {
      expect(await callsFor(text)).toEqual([['save_habit', args]]);
    });

    it('does not split inside a quoted value', async () => {
      expect(await callsFor('create folder "Work and create folder Home"')).toEqual([
        ['create_folder', { name: 'Work and create folder Home' }],
      ]);
      expect(await callsFor('remember that "a; b"')).toEqual([['remember', { content: 'a; b' }]]);
      expect(await callsFor('criar pasta «Trabalho e criar pasta Casa»')).toEqual([
        ['create_folder', { name: 'Trabalho e criar pasta Casa' }],
      ]);
      expect(await callsFor('rename document ‘to do; later’ to Todo')).toEqual([
        ['rename_document', { document_id: 'to do; later', new_title: 'Todo' }],
      ]);
    });

    it('gives unique ids within the response, numbered after the earlier assistant turns', async () => {
      const { req } = request([
        { role: 'user', content: 'create folder A' },
        { role: 'assistant', content: '', tool_calls: [{ id: 'offline_1_1', name: 'create_folder', arguments: '{}' }] },
        { role: 'tool', content: '{"success":true,"message":"ok"}', tool_call_id: 'offline_1_1' },
        { role: 'assistant', content: 'ok' },
        { role: 'user', content: 'create folder B; create folder C and list habits' },
      ]);
      const response = await new OfflinePlanner().complete(req);
      expect(response.content).toBe('');
      expect(response.toolCalls.map((call) => call.id)).toEqual(['offline_3_1', 'offline_3_2', 'offline_3_3']);
    });

    it('starts at offline_1_1 in a new conversation and does not stream tokens for tool calls', async () => {
      const { response, tokens } = await plan('list goals and list habits');
      expect(response.toolCalls.map((call) => call.id)).toEqual(['offline_1_1', 'offline_1_2']);
      expect(tokens).toEqual([]);
    });

    it('plans at most 10 calls, says how many commands were left out, and says it again in the summary', async () => {
      const commands = (count: number) => Array.from({ length: count }, (_, i) => `create folder F${i + 1}`).join(' and ');
      const exactly = await plan(commands(10));
      expect(exactly.response).toMatchObject({ content: '' });
      expect(exactly.response.toolCalls).toHaveLength(10);

      const { response, tokens } = await plan(`${commands(12)}; sing a song`);
      const note = 'Only the first 10 of your 13 commands were planned (at most 10 at a time); send the others again.';
      expect(response.content).toBe(note);
      expect(tokens.join('')).toBe(note);
      expect(response.toolCalls.map((call) => JSON.parse(call.arguments) as unknown)).toEqual(
        Array.from({ length: 10 }, (_, i) => ({ name: `F${i + 1}` })),
      );

      const { req } = request([
        { role: 'user', content: commands(12) },
        { role: 'assistant', content: note, tool_calls: response.toolCalls },
        ...response.toolCalls.map((call): ChatMessage => ({
          role: 'tool',
          content: '{"success":true,"message":"ok"}',
          tool_call_id: call.id,
        })),
      ]);
      expect((await new OfflinePlanner().complete(req)).content).toBe(`${'ok\n'.repeat(10)}${note}`);
    });

    it('answers with the help text when one of the first 10 commands is not one', async () => {
      const { response } = await plan('create folder A; sing a song; create folder B');
      expect(response).toEqual({ content: OFFLINE_HELP, toolCalls: [] });
    });

    it.each<[string, Array<[string, Record<string, unknown>]>, string]>([
      ['create folder Work and remind me to call mom', [['create_folder', { name: 'Work' }]], OFFLINE_TEXTS.en.askTime],
      ['remind me to call mom; create folder Work', [['create_folder', { name: 'Work' }]], OFFLINE_TEXTS.en.askTime],
      ['criar pasta Trabalho e me lembra de ligar pra mãe', [['create_folder', { name: 'Trabalho' }]], OFFLINE_TEXTS.pt.askTime],
    ])('runs the other commands of %p and asks when for the reminder said without a time', async (text, calls, question) => {
      const { response, tokens } = await plan(text);
      expect(toolCalls(response)).toEqual(calls);
      expect(response.content).toBe(question);
      expect(tokens.join('')).toBe(question);
    });

    it('counts a reminder without a time among the first 10 commands', async () => {
      const folders = Array.from({ length: 10 }, (_, i) => `create folder F${i + 1}`).join('; ');
      const { response } = await plan(`remind me to call mom; ${folders}`);
      expect(response.toolCalls).toHaveLength(9);
      expect(response.content).toBe(`${OFFLINE_TEXTS.en.capped(10, 11)}\n\n${OFFLINE_TEXTS.en.askTime}`);
    });

    it('answers with the help text when a message with a reminder without a time has a piece that is no command', async () => {
      const { response } = await plan('create folder A; remind me to call mom; sing a song');
      expect(response).toEqual({ content: OFFLINE_HELP, toolCalls: [] });
    });

    it('serialises only the arguments that have values', async () => {
      const { response } = await plan('create folder Work');
      expect(response.toolCalls[0]?.arguments).toBe('{"name":"Work"}');
    });
  });

  describe('messages merged into one turn (docs/agent.md#busy-sessions)', () => {
    const ok = '{"success":true,"message":"ok"}';
    const answered: ChatMessage[] = [
      { role: 'system', content: 'You are Nexo.' },
      { role: 'user', content: 'create folder Old' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'offline_1_1', name: 'create_folder', arguments: '{}' }] },
      { role: 'tool', content: ok, tool_call_id: 'offline_1_1' },
      { role: 'assistant', content: 'ok' },
    ];
    /** The turn's messages after an answered exchange, the turn context right before the newest (turn/context.ts). */
    const merged = (...texts: string[]): ChatMessage[] => [
      ...answered,
      ...texts.slice(0, -1).map((content): ChatMessage => ({ role: 'user', content })),
      { role: 'system', content: '## Current time\n2025-01-15 10:00 (UTC)' },
      { role: 'user', content: texts.at(-1) ?? '' },
    ];
    /** The request of a turn that answers `texts`, merged into it. */
    const turnOf = (...texts: string[]) => request(merged(...texts), { turnMessages: texts.length });

    it('acts on every user message of the turn, in order, and not on those already answered', async () => {
      const { req, tokens } = turnOf(
        'create folder Work',
        '@my_bot create document Notes in Work and list habits',
        'remember that I prefer tea',
      );
      const response = await new OfflinePlanner({ now: () => NOW }).complete(req);
      expect(response.content).toBe('');
      expect(tokens).toEqual([]);
      expect(response.toolCalls.map((call) => [call.id, call.name, JSON.parse(call.arguments) as unknown])).toEqual([
        ['offline_3_1', 'create_folder', { name: 'Work' }],
        ['offline_3_2', 'create_document', { title: 'Notes', folder_id: 'Work' }],
        ['offline_3_3', 'list_habits', {}],
        ['offline_3_4', 'remember', { content: 'I prefer tea' }],
      ]);
    });

    it('plans at most 10 calls for the whole turn and counts the commands past them', async () => {
      const commands = (from: number) => Array.from({ length: 6 }, (_, i) => `create folder F${from + i}`).join('; ');
      const { req } = turnOf(commands(1), commands(7), 'sing a song');
      const response = await new OfflinePlanner().complete(req);
      expect(response.toolCalls.map((call) => JSON.parse(call.arguments) as unknown)).toEqual(
        Array.from({ length: 10 }, (_, i) => ({ name: `F${i + 1}` })),
      );
      // "sing a song" comes after the cap: counted, never parsed.
      expect(response.content).toBe('Only the first 10 of your 13 commands were planned (at most 10 at a time); send the others again.');
    });

    it('runs the messages it understands, names how many it left out with the help text, and repeats that in the summary', async () => {
      const { req, tokens } = turnOf('hi there', 'create folder Work; sing a song', 'create folder Home');
      const response = await new OfflinePlanner().complete(req);
      const note = `Left out, not understood: 2 of your 3 messages.\n\n${OFFLINE_HELP}`;
      expect(response.toolCalls.map((call) => [call.name, JSON.parse(call.arguments) as unknown])).toEqual([
        ['create_folder', { name: 'Home' }],
      ]);
      expect(response.content).toBe(note);
      expect(tokens.join('')).toBe(note);

      const { req: after } = request([
        ...req.messages,
        { role: 'assistant', content: note, tool_calls: response.toolCalls },
        { role: 'tool', content: ok, tool_call_id: response.toolCalls[0]?.id ?? '' },
      ]);
      expect((await new OfflinePlanner().complete(after)).content).toBe(`ok\n${note}`);
    });

    it("does not act on an earlier turn's message that got no answer (a cancelled turn)", async () => {
      const { req } = request(merged('delete folder Old', 'create folder Home'), { turnMessages: 1 });
      const response = await new OfflinePlanner().complete(req);
      expect(response.toolCalls.map((call) => [call.name, JSON.parse(call.arguments) as unknown])).toEqual([
        ['create_folder', { name: 'Home' }],
      ]);
    });

    it('answers with the help text alone when it understands none of them', async () => {
      const { req } = turnOf('hi there', 'thanks');
      expect(await new OfflinePlanner().complete(req)).toEqual({ content: OFFLINE_HELP, toolCalls: [] });
    });
  });

  describe('text answers', () => {
    it.each<[string, string]>([
      ['a goal date that is no date', 'create goal Run by 2026-13-45'],
      ['a goal date past the end of its month', 'criar meta Correr até 2026-02-30'],
      ['a Portuguese goal date past the end of its month', 'criar meta Correr até 31/02/2027'],
      ['an English goal date past the end of its month', 'create goal Run by 31/02/2027'],
      ['a folder name over 100 characters', `create folder ${'x'.repeat(101)}`],
      ['a document title over 255 characters', `rename document Plan to ${'x'.repeat(256)}`],
      ['a reminder text over 500 characters', `remind me to ${'x'.repeat(501)} at 15:00`],
    ])('answers %s, which its tool would refuse, with the help text', async (_, text) => {
      expectHelp((await plan(text)).response);
    });

    it.each([
      'remember that',
      'search for',
      'create habit daily',
      'criar hábito diário',
      'create habit monthly',
      'criar hábito dias úteis',
      'create habit every day',
      'create document with content hello',
      'create document with the content hello',
      'create goal by 2026-12-31',
      'remind me to',
    ])('answers %p, whose value is only the words around one, with the help text', async (text) => {
      expectHelp((await plan(text)).response);
    });

    it('keeps such a word as a value when it is quoted', async () => {
      expect(await callsFor('create folder "daily"')).toEqual([['create_folder', { name: 'daily' }]]);
      expect(await callsFor('rename document to do to Todo')).toEqual([['rename_document', { document_id: 'to do', new_title: 'Todo' }]]);
    });

    it.each(['hello there', 'what is the weather like?', '', 'create folder', 'create folder ""', '@my_bot', 'create folder 😀'])(
      'answers %p with the help text',
      async (text) => {
        const { response, tokens } = await plan(text);
        expect(response).toEqual({ content: OFFLINE_HELP, toolCalls: [] });
        expect(tokens.join('')).toBe(OFFLINE_HELP);
      },
    );

    it('streams in several word chunks that concatenate to the content exactly', async () => {
      const { response, tokens } = await plan('hello');
      expect(tokens.length).toBeGreaterThan(10);
      expect(tokens.join('')).toBe(response.content);
      expect(tokens.every((token) => token.trim().length > 0 && !/\S\s+\S/.test(token))).toBe(true);
    });

    it('awaits an async onToken', async () => {
      const seen: string[] = [];
      const { req } = request('hello', {
        onToken: async (delta) => {
          await new Promise((resolve) => setImmediate(resolve));
          seen.push(delta);
        },
      });
      const response = await new OfflinePlanner().complete(req);
      expect(seen.join('')).toBe(response.content);
    });

    it('answers with the help text when a needed tool is not offered', async () => {
      const { response, tokens } = await plan('create folder Work and list habits', {
        tools: [tool('create_folder')],
      });
      expect(response.toolCalls).toEqual([]);
      expect(response.content).toContain('list_habits');
      expect(response.content).toContain(OFFLINE_HELP);
      expect(tokens.join('')).toBe(response.content);
    });

    it('answers in text when no tools are offered (the last iteration)', async () => {
      const { response, tokens } = await plan('create folder Work', { tools: [] });
      expect(response.toolCalls).toEqual([]);
      expect(response.content).toContain(OFFLINE_HELP);
      expect(tokens.join('')).toBe(response.content);
    });

    it('answers with the help text when one chained part is not a command', async () => {
      const { response } = await plan('create folder Work; sing a song');
      expect(response).toEqual({ content: OFFLINE_HELP, toolCalls: [] });
    });

    it('answers with the help text when the last message is not from the user or a tool', async () => {
      const { req } = request([{ role: 'system', content: 'You are helpful.' }]);
      expect((await new OfflinePlanner().complete(req)).content).toBe(OFFLINE_HELP);
      const { req: empty } = request([]);
      expect((await new OfflinePlanner().complete(empty)).content).toBe(OFFLINE_HELP);
    });
  });

  describe('in Portuguese', () => {
    it.each(['criar', 'oi, tudo bem?', 'qual é o sentido da vida?', 'criar pasta', 'Olá! Você pode me ajudar?'])(
      'answers %p with the help text in Portuguese',
      async (text) => {
        const { response, tokens } = await plan(text);
        expect(response).toEqual({ content: OFFLINE_HELP_PT, toolCalls: [] });
        expect(tokens.join('')).toBe(OFFLINE_HELP_PT);
      },
    );

    it.each(['hi, how are you?', 'what is the meaning of life?', 'create folder', 'remind me'])('answers %p in English', async (text) => {
      expect((await plan(text)).response).toEqual({ content: OFFLINE_HELP, toolCalls: [] });
    });

    it('says in Portuguese what it left out', async () => {
      const chain = Array.from({ length: 12 }, (_, i) => `criar pasta P${i + 1}`).join(' e ');
      expect((await plan(chain)).response.content).toBe(
        'Só os primeiros 10 dos seus 12 comandos foram planejados (no máximo 10 de cada vez); envie os outros de novo.',
      );
      const { response } = await plan('criar pasta Casa', { tools: [] });
      expect(response.content).toBe(`Isso precisa de create_folder, que não está disponível agora.\n\n${OFFLINE_HELP_PT}`);
    });

    it('says what it is and how to connect a real model', () => {
      expect(OFFLINE_HELP_PT).toMatch(/planejador offline/);
      expect(OFFLINE_HELP_PT).toMatch(/não um modelo de linguagem/);
      expect(OFFLINE_HELP_PT).toContain('OPENAI_API_KEY');
    });

    itRecognisesEveryExample(OFFLINE_HELP_PT, / \/ /);
  });

  describe('summarising tool results', () => {
    const conversation = (...results: string[]): ChatMessage[] => [
      { role: 'user', content: 'create folder Old' },
      { role: 'assistant', content: '', tool_calls: [{ id: 'offline_1_1', name: 'create_folder', arguments: '{}' }] },
      { role: 'tool', content: '{"success":true,"message":"Earlier result"}', tool_call_id: 'offline_1_1' },
      { role: 'assistant', content: 'Earlier result' },
      { role: 'user', content: 'do things' },
      {
        role: 'assistant',
        content: '',
        tool_calls: results.map((_, i) => ({ id: `offline_3_${i + 1}`, name: 'x', arguments: '{}' })),
      },
      ...results.map((content, i): ChatMessage => ({ role: 'tool', content, tool_call_id: `offline_3_${i + 1}` })),
    ];

    it.each<[string, string[], string]>([
      [
        'a success',
        [JSON.stringify({ success: true, folder_id: 'folder_1', message: 'Created folder "Work" [ID: folder_1].' })],
        'Created folder "Work" [ID: folder_1].',
      ],
      [
        'a failure with a hint',
        [JSON.stringify({ success: false, error: 'No folder named "Wrok".', hint: 'Did you mean "Work"?' })],
        'Could not do that: No folder named "Wrok". Did you mean "Work"?',
      ],
      ['a failure without a hint', [JSON.stringify({ success: false, error: 'Too long.' })], 'Could not do that: Too long.'],
      ['a result that is not JSON', ['plain text result'], 'plain text result'],
      ['JSON without a success flag', ['[1,2]'], '[1,2]'],
      [
        'several results, one a line',
        [
          JSON.stringify({ success: true, message: 'Created folder "A".' }),
          JSON.stringify({ success: false, error: 'Folder "B" exists.', hint: 'Pick another name.' }),
          'done',
        ],
        'Created folder "A".\nCould not do that: Folder "B" exists. Pick another name.\ndone',
      ],
    ])('summarises %s, only after the last tool-calling assistant message', async (_, results, expected) => {
      const { req, tokens } = request(conversation(...results));
      const response = await new OfflinePlanner().complete(req);
      expect(response).toEqual({ content: expected, toolCalls: [] });
      expect(tokens.join('')).toBe(expected);
    });

    it('summarises in text even when no tools are offered', async () => {
      const { req } = request(conversation(JSON.stringify({ success: true, message: 'Saved.' })), { tools: [] });
      expect((await new OfflinePlanner().complete(req)).content).toBe('Saved.');
    });
  });

  describe('abort', () => {
    it('throws when the signal is already aborted', async () => {
      const controller = new AbortController();
      controller.abort();
      const { req, tokens } = request('hello', { signal: controller.signal });
      await expect(new OfflinePlanner().complete(req)).rejects.toThrow('aborted');
      expect(tokens).toEqual([]);
    });

    it('stops streaming when aborted mid-answer', async () => {
      const controller = new AbortController();
      const tokens: string[] = [];
      const { req } = request('hello', {
        signal: controller.signal,
        onToken: (delta) => {
          tokens.push(delta);
          if (tokens.length === 3) controller.abort();
        },
      });
      await expect(new OfflinePlanner().complete(req)).rejects.toThrow('aborted');
      expect(tokens).toHaveLength(3);
    });
  });

  describe('OFFLINE_HELP', () => {
    it('says what it is and how to connect a real model', () => {
      expect(OFFLINE_HELP).toMatch(/offline planner/i);
      expect(OFFLINE_HELP).toMatch(/not a language model/i);
      expect(OFFLINE_HELP).toContain('OPENAI_API_KEY');
      expect(OFFLINE_HELP).toContain('OPENAI_BASE_URL');
    });

    // Every example the help shows must work, in both languages.
    itRecognisesEveryExample(OFFLINE_HELP, / \| | \/ /);
  });
});

/** Every example a help text lists (its `- ` lines, split at `separator`) is one call, and together they use every tool. */
function itRecognisesEveryExample(help: string, separator: RegExp): void {
  const examples = help
    .split('\n')
    .filter((line) => line.startsWith('- '))
    .flatMap((line) => line.slice(2).split(separator));

  it('lists an example for every tool', async () => {
    const used = new Set<string>();
    for (const example of examples) for (const [name] of await callsFor(example)) used.add(name);
    expect([...used].sort()).toEqual([...TOOL_NAMES].sort());
  });

  it.each(examples)('example %p is recognised', async (example) => {
    expect(await callsFor(example)).toHaveLength(1);
  });
}
