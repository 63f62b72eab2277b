import { getTool, parseToolArgs } from '@assistant/shared';
import type { ChatMessage, ChatRequest, ChatResponse, ToolDefinitionForModel } from './chat-model';
import { OFFLINE_HELP, OFFLINE_HELP_PT, OfflinePlanner } from './offline.planner';

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

  describe('single commands', () => {
    it.each<[string, string, Record<string, unknown>]>([
      // Folders
      ['create folder Work', 'create_folder', { name: 'Work' }],
      ['Create a new folder Work', 'create_folder', { name: 'Work' }],
      ['new folder Work', 'create_folder', { name: 'Work' }],
      ['create folder Reports in Work', 'create_folder', { name: 'Reports', parent_folder_id: 'Work' }],
      ['create folder Reports inside folder_1', 'create_folder', { name: 'Reports', parent_folder_id: 'folder_1' }],
      ['criar pasta Trabalho', 'create_folder', { name: 'Trabalho' }],
      ['crie a pasta Trabalho', 'create_folder', { name: 'Trabalho' }],
      ['nova pasta Viagens', 'create_folder', { name: 'Viagens' }],
      ['criar pasta Relatórios em Trabalho', 'create_folder', { name: 'Relatórios', parent_folder_id: 'Trabalho' }],
      ['criar pasta Fotos na pasta Viagens', 'create_folder', { name: 'Fotos', parent_folder_id: 'Viagens' }],
      ['criar pasta Fotos dentro de Viagens', 'create_folder', { name: 'Fotos', parent_folder_id: 'Viagens' }],
      ['create folder "Rock in Rio" in Music', 'create_folder', { name: 'Rock in Rio', parent_folder_id: 'Music' }],
      ['criar pasta “Viagem em Família”', 'create_folder', { name: 'Viagem em Família' }],
      ['create a folder called Work', 'create_folder', { name: 'Work' }],
      ['crie uma pasta chamada Viagens', 'create_folder', { name: 'Viagens' }],
      ['create folder named', 'create_folder', { name: 'named' }],
      ['create a document titled Notes in Work', 'create_document', { title: 'Notes', folder_id: 'Work' }],
      ['criar hábito com o nome Yoga diário', 'save_habit', { name: 'Yoga', frequency: 'daily' }],
      ['criar meta chamada correr 5 km', 'create_goal', { title: 'correr 5 km' }],
      ['rename folder Work to Office', 'rename_folder', { folder_id: 'Work', new_name: 'Office' }],
      ['renomear pasta Trabalho para Escritório', 'rename_folder', { folder_id: 'Trabalho', new_name: 'Escritório' }],
      ['delete folder Old', 'delete_folder', { folder_id: 'Old' }],
      ['apagar pasta Antiga', 'delete_folder', { folder_id: 'Antiga' }],
      ['excluir a pasta folder_3', 'delete_folder', { folder_id: 'folder_3' }],
      ['list folder Work', 'get_folder_contents', { folder_id: 'Work' }],
      ['show folder Work', 'get_folder_contents', { folder_id: 'Work' }],
      ['what is in folder Work?', 'get_folder_contents', { folder_id: 'Work' }],
      ["what's in the folder Work", 'get_folder_contents', { folder_id: 'Work' }],
      ['listar pasta Trabalho', 'get_folder_contents', { folder_id: 'Trabalho' }],
      ['mostrar pasta Trabalho', 'get_folder_contents', { folder_id: 'Trabalho' }],
      ['o que tem na pasta Trabalho?', 'get_folder_contents', { folder_id: 'Trabalho' }],
      ['show me the folder Work', 'get_folder_contents', { folder_id: 'Work' }],
      ["what's in my folder Work", 'get_folder_contents', { folder_id: 'Work' }],
      ['what is in the Work folder?', 'get_folder_contents', { folder_id: 'Work' }],
      ['me mostra a pasta Trabalho', 'get_folder_contents', { folder_id: 'Trabalho' }],
      // Documents
      ['create document Notes', 'create_document', { title: 'Notes' }],
      ['create document Notes in Work', 'create_document', { title: 'Notes', folder_id: 'Work' }],
      ['create document Notes with content Buy milk', 'create_document', { title: 'Notes', content: 'Buy milk' }],
      [
        'create document Notes in Work with content Call Ana in the morning',
        'create_document',
        { title: 'Notes', folder_id: 'Work', content: 'Call Ana in the morning' },
      ],
      ['criar documento Notas', 'create_document', { title: 'Notas' }],
      ['novo documento Notas na pasta Trabalho', 'create_document', { title: 'Notas', folder_id: 'Trabalho' }],
      ['crie um documento chamado Plano dentro da pasta Trabalho', 'create_document', { title: 'Plano', folder_id: 'Trabalho' }],
      ['create a document Plan inside Work', 'create_document', { title: 'Plan', folder_id: 'Work' }],
      [
        'criar documento Notas em Trabalho com conteúdo Comprar pão',
        'create_document',
        { title: 'Notas', folder_id: 'Trabalho', content: 'Comprar pão' },
      ],
      ['criar documento Notas com conteudo Olá', 'create_document', { title: 'Notas', content: 'Olá' }],
      ['criar documento Notas com o conteúdo Olá', 'create_document', { title: 'Notas', content: 'Olá' }],
      ['create document Notes with the content Hello', 'create_document', { title: 'Notes', content: 'Hello' }],
      ['create document Notes in Work containing Hello', 'create_document', { title: 'Notes', folder_id: 'Work', content: 'Hello' }],
      ['rename document Notes to Minutes', 'rename_document', { document_id: 'Notes', new_title: 'Minutes' }],
      ['renomear documento Notas para Ata', 'rename_document', { document_id: 'Notas', new_title: 'Ata' }],
      ['renomeia o documento Notas pra Ata', 'rename_document', { document_id: 'Notas', new_title: 'Ata' }],
      ['renomear hábito yoga pra alongamento', 'update_habit', { habit_id: 'yoga', name: 'alongamento' }],
      ['rename document Notes → Minutes', 'rename_document', { document_id: 'Notes', new_title: 'Minutes' }],
      ['rename folder Work -> Office', 'rename_folder', { folder_id: 'Work', new_name: 'Office' }],
      ['move document Notes to Archive', 'move_document', { document_id: 'Notes', folder_id: 'Archive' }],
      ['move document Notes to the folder Archive', 'move_document', { document_id: 'Notes', folder_id: 'Archive' }],
      ['mover documento Notas para Arquivo', 'move_document', { document_id: 'Notas', folder_id: 'Arquivo' }],
      ['mover documento Notas para a pasta Arquivo', 'move_document', { document_id: 'Notas', folder_id: 'Arquivo' }],
      ['move the document Notes to the Archive folder', 'move_document', { document_id: 'Notes', folder_id: 'Archive' }],
      ['move document Notes to "Archive folder"', 'move_document', { document_id: 'Notes', folder_id: 'Archive folder' }],
      ['delete document Draft', 'delete_document', { document_id: 'Draft' }],
      ['excluir documento Rascunho', 'delete_document', { document_id: 'Rascunho' }],
      ['search documents budget 2025', 'search_documents', { query: 'budget 2025' }],
      ['search for Budget', 'search_documents', { query: 'Budget' }],
      ['find documents about budget', 'search_documents', { query: 'budget' }],
      ['procure documentos sobre orçamento', 'search_documents', { query: 'orçamento' }],
      ['buscar documentos orçamento', 'search_documents', { query: 'orçamento' }],
      ['procurar Orçamento anual', 'search_documents', { query: 'Orçamento anual' }],
      // Habits
      ['create habit Yoga', 'save_habit', { name: 'Yoga' }],
      ['create habit read 10 pages daily', 'save_habit', { name: 'read 10 pages', frequency: 'daily' }],
      ['create habit run every day', 'save_habit', { name: 'run', frequency: 'daily' }],
      ['create habit review the week weekly', 'save_habit', { name: 'review the week', frequency: 'weekly' }],
      ['criar hábito meditação diária', 'save_habit', { name: 'meditação', frequency: 'daily' }],
      ['criar habito meditação', 'save_habit', { name: 'meditação' }],
      ['novo hábito ler todos os dias', 'save_habit', { name: 'ler', frequency: 'daily' }],
      ['novo hábito correr todo dia', 'save_habit', { name: 'correr', frequency: 'daily' }],
      ['criar hábito faxina semanal', 'save_habit', { name: 'faxina', frequency: 'weekly' }],
      ['create habit yoga every weekday', 'save_habit', { name: 'yoga', frequency: 'weekdays' }],
      ['criar hábito de meditação diária', 'save_habit', { name: 'meditação', frequency: 'daily' }],
      ['create a habit of meditating daily', 'save_habit', { name: 'meditating', frequency: 'daily' }],
      ['create a habit to read', 'save_habit', { name: 'read' }],
      ['create a goal to run 10k by 31/12/2026', 'create_goal', { title: 'run 10k', target_date: '2026-12-31' }],
      ['criar uma meta de correr 10k', 'create_goal', { title: 'correr 10k' }],
      ['criar hábito yoga nos dias úteis', 'save_habit', { name: 'yoga', frequency: 'weekdays' }],
      ['create habit budget review monthly', 'save_habit', { name: 'budget review', frequency: 'monthly' }],
      ['criar hábito revisar orçamento todo mês', 'save_habit', { name: 'revisar orçamento', frequency: 'monthly' }],
      ['create a habit called meditation, daily', 'save_habit', { name: 'meditation', frequency: 'daily' }],
      ['create habit yoga e meditação', 'save_habit', { name: 'yoga e meditação' }],
      ['rename habit yoga to stretching', 'update_habit', { habit_id: 'yoga', name: 'stretching' }],
      ['renomear hábito yoga para alongamento', 'update_habit', { habit_id: 'yoga', name: 'alongamento' }],
      ['delete habit yoga', 'delete_habit', { habit_id: 'yoga' }],
      ['apagar hábito Yoga', 'delete_habit', { habit_id: 'Yoga' }],
      ['list habits', 'list_habits', {}],
      ['my habits', 'list_habits', {}],
      ['show my habits', 'list_habits', {}],
      ['listar hábitos', 'list_habits', {}],
      ['meus habitos', 'list_habits', {}],
      ['lista meus hábitos', 'list_habits', {}],
      ['show me my habits', 'list_habits', {}],
      ['what are my habits?', 'list_habits', {}],
      ['quais são meus hábitos?', 'list_habits', {}],
      ['quais os meus hábitos?', 'list_habits', {}],
      ['quais as minhas metas', 'list_goals', {}],
      ['me mostra meus hábitos', 'list_habits', {}],
      ['show me my reminders', 'list_reminders', {}],
      ['quais sao os meus lembretes', 'list_reminders', {}],
      ['what are my goals', 'list_goals', {}],
      // Reminders
      ['list reminders', 'list_reminders', {}],
      ['listar lembretes', 'list_reminders', {}],
      ['meus lembretes', 'list_reminders', {}],
      ['delete reminder reminder_2', 'delete_reminder', { reminder_id: 'reminder_2' }],
      ['apagar lembrete reminder_2', 'delete_reminder', { reminder_id: 'reminder_2' }],
      // Goals
      ['create goal Run 10k', 'create_goal', { title: 'Run 10k' }],
      ['create goal Run 10k by 2025-12-31', 'create_goal', { title: 'Run 10k', target_date: '2025-12-31' }],
      ['criar meta Correr 10k até 2025-12-31', 'create_goal', { title: 'Correr 10k', target_date: '2025-12-31' }],
      ['nova meta Ler 12 livros', 'create_goal', { title: 'Ler 12 livros' }],
      ['criar meta Correr até 31/12/2026', 'create_goal', { title: 'Correr', target_date: '2026-12-31' }],
      ['criar meta Correr ate 5/1/2027', 'create_goal', { title: 'Correr', target_date: '2027-01-05' }],
      ['criar meta Correr até 31.12.2026', 'create_goal', { title: 'Correr', target_date: '2026-12-31' }],
      // English written day first, as most of the world does; month first only where it cannot be a day.
      ['create goal Run 10k by 31/12/2026', 'create_goal', { title: 'Run 10k', target_date: '2026-12-31' }],
      ['create goal Run 10k until 5/1/2027', 'create_goal', { title: 'Run 10k', target_date: '2027-01-05' }],
      ['create goal Run 10k by 12/31/2026', 'create_goal', { title: 'Run 10k', target_date: '2026-12-31' }],
      // A date in words, the way people write it.
      ['create goal Run 10k by December 31, 2026', 'create_goal', { title: 'Run 10k', target_date: '2026-12-31' }],
      ['create goal Run 10k by 31 December 2026', 'create_goal', { title: 'Run 10k', target_date: '2026-12-31' }],
      ['criar meta Correr 10k até 31 de dezembro de 2026', 'create_goal', { title: 'Correr 10k', target_date: '2026-12-31' }],
      ['create goal Stand by me by 2026-12-31', 'create_goal', { title: 'Stand by me', target_date: '2026-12-31' }],
      ['create goal Stand by me', 'create_goal', { title: 'Stand by me' }],
      ['create goal Read by the lake', 'create_goal', { title: 'Read by the lake' }],
      ['list goals', 'list_goals', {}],
      ['listar metas', 'list_goals', {}],
      ['minhas metas', 'list_goals', {}],
      ['delete goal goal_1', 'delete_goal', { goal_id: 'goal_1' }],
      ['apagar meta goal_1', 'delete_goal', { goal_id: 'goal_1' }],
      // Memory
      ['remember that I prefer tea', 'remember', { content: 'I prefer tea' }],
      ['remember my wife is called Ana', 'remember', { content: 'my wife is called Ana' }],
      ['lembre que eu prefiro chá', 'remember', { content: 'eu prefiro chá' }],
      ['lembre-se de que eu acordo às 6h', 'remember', { content: 'eu acordo às 6h' }],
      ['anote que o Wi-Fi é 1234', 'remember', { content: 'o Wi-Fi é 1234' }],
    ])('%p → %s', async (text, name, args) => {
      expect(await callsFor(text)).toEqual([[name, args]]);
    });
  });

  describe('normalising the message', () => {
    it.each<[string, Record<string, unknown>]>([
      ['CREATE FOLDER Work', { name: 'Work' }],
      ['please create folder Work', { name: 'Work' }],
      ['Please, create folder Work!', { name: 'Work' }],
      ['create folder Work please.', { name: 'Work' }],
      ['por favor criar pasta Trabalho.', { name: 'Trabalho' }],
      ['@my_assistant_bot create folder Work', { name: 'Work' }],
      ['@my_assistant_bot please create folder Work?!', { name: 'Work' }],
      ['  create folder   Work  ', { name: 'Work' }],
      ['create folder Plan   2026', { name: 'Plan 2026' }],
      ['create folder Plan\t2026', { name: 'Plan 2026' }],
      ['create folder "Plan   2026"', { name: 'Plan   2026' }],
      ['create folder "Work"', { name: 'Work' }],
      ["create folder 'Work'", { name: 'Work' }],
      ['create folder “Work”', { name: 'Work' }],
      ['CRIAR PASTA Ações', { name: 'Ações' }],
      ['can you create folder Work?', { name: 'Work' }],
      ['Could you please create folder Work', { name: 'Work' }],
      ['você pode criar pasta Trabalho?', { name: 'Trabalho' }],
      ['Voce pode, por favor, criar a pasta Trabalho', { name: 'Trabalho' }],
      ['pode criar pasta Trabalho por favor', { name: 'Trabalho' }],
      ['criar pasta Trabalho 😀', { name: 'Trabalho' }],
      ['create folder Work…', { name: 'Work' }],
      ['👋 create folder Work 👍🏽!', { name: 'Work' }],
      ['create folder Brasil 🇧🇷', { name: 'Brasil' }],
      ['create folder 📁 Work', { name: '📁 Work' }],
      ['criar pasta «Plano 2026»', { name: 'Plano 2026' }],
      ['create folder ‘Plan 2026’', { name: 'Plan 2026' }],
      // Emoticons around a command are decoration too, and the ";" of ";)" separates nothing.
      ['create folder Work ;)', { name: 'Work' }],
      ['create folder Work :)', { name: 'Work' }],
      ['create folder Work :-) :D', { name: 'Work' }],
      ['create folder Work;)', { name: 'Work' }],
      ['criar pasta Trabalho ;-)', { name: 'Trabalho' }],
      ['create folder Work xD!', { name: 'Work' }],
      ['create folder Work <3', { name: 'Work' }],
      [':) create folder Work', { name: 'Work' }],
      ['create folder "Work :)"', { name: 'Work :)' }],
      ['create folder a;p', { name: 'a;p' }],
      // Greetings and wishes before a command, thanks after it.
      ['hey, create folder Work', { name: 'Work' }],
      ['Hi! create folder Work', { name: 'Work' }],
      ['oi, cria uma pasta Trabalho', { name: 'Trabalho' }],
      ['I want to create a folder Work', { name: 'Work' }],
      ["I'd like to create folder Work", { name: 'Work' }],
      ['quero criar uma pasta Trabalho', { name: 'Trabalho' }],
      ['create folder Work, thanks!', { name: 'Work' }],
      ['criar pasta Trabalho, obrigado', { name: 'Trabalho' }],
      ['create folder Thanks', { name: 'Thanks' }],
    ])('%p', async (text, args) => {
      expect(await callsFor(text)).toEqual([['create_folder', args]]);
    });

    it('reads a chain and a reminder that end in an emoticon', async () => {
      expect(await callsFor('create folder Work ;) ; list habits :)')).toEqual([
        ['create_folder', { name: 'Work' }],
        ['list_habits', {}],
      ]);
      expect(await callsFor('remind me to drink water at 15:00 ;)')).toEqual([
        ['create_reminder', { text: 'drink water', at: '2025-01-15T15:00:00' }],
      ]);
    });

    it('reads a polite request for a reminder or a list', async () => {
      expect(await callsFor('poderia listar meus hábitos?')).toEqual([['list_habits', {}]]);
      expect(await callsFor('Can you list my habits please?')).toEqual([['list_habits', {}]]);
      expect(await callsFor('você pode me lembrar de ligar às 15h?')).toEqual([
        ['create_reminder', { text: 'ligar', at: '2025-01-15T15:00:00' }],
      ]);
    });

    it('accepts keywords with or without accents and keeps the value as written', async () => {
      expect(await callsFor('CRIAR HÁBITO Meditação Guiada DIÁRIA')).toEqual([
        ['save_habit', { name: 'Meditação Guiada', frequency: 'daily' }],
      ]);
      expect(await callsFor('criar habito Meditação diaria')).toEqual([['save_habit', { name: 'Meditação', frequency: 'daily' }]]);
    });

    it('reads a colon after the first words of a command', async () => {
      expect(await callsFor('remember: I prefer tea')).toEqual([['remember', { content: 'I prefer tea' }]]);
      expect(await callsFor('create folder: Work and remember: I prefer tea')).toEqual([
        ['create_folder', { name: 'Work' }],
        ['remember', { content: 'I prefer tea' }],
      ]);
      expect(await callsFor('lembrete: ligar às 15h')).toEqual([['create_reminder', { text: 'ligar', at: '2025-01-15T15:00:00' }]]);
    });

    it('only strips a mention at the very start', async () => {
      expect(await callsFor('remember that @ana likes tea')).toEqual([['remember', { content: '@ana likes tea' }]]);
    });
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
    it.each([
      'criar',
      'oi, tudo bem?',
      'qual é o sentido da vida?',
      'criar pasta',
      'me lembra de ligar para a Ana',
      'Olá! Você pode me ajudar?',
    ])('answers %p with the help text in Portuguese', async (text) => {
      const { response, tokens } = await plan(text);
      expect(response).toEqual({ content: OFFLINE_HELP_PT, toolCalls: [] });
      expect(tokens.join('')).toBe(OFFLINE_HELP_PT);
    });

    it.each(['hi, how are you?', 'what is the meaning of life?', 'create folder', 'remind me to call Ana'])(
      'answers %p in English',
      async (text) => {
        expect((await plan(text)).response).toEqual({ content: OFFLINE_HELP, toolCalls: [] });
      },
    );

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

    const examples = OFFLINE_HELP_PT.split('\n')
      .filter((line) => line.startsWith('- '))
      .flatMap((line) => line.slice(2).split(' / '));

    it('lists an example for every tool', async () => {
      const used = new Set<string>();
      for (const example of examples) for (const [name] of await callsFor(example)) used.add(name);
      expect([...used].sort()).toEqual([...TOOL_NAMES].sort());
    });

    it.each(examples)('example %p is recognised', async (example) => {
      expect(await callsFor(example)).toHaveLength(1);
    });
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
    const examples = OFFLINE_HELP.split('\n')
      .filter((line) => line.startsWith('- '))
      .flatMap((line) => line.slice(2).split(/ \| | \/ /));

    it('lists an example for every tool', async () => {
      const used = new Set<string>();
      for (const example of examples) for (const [name] of await callsFor(example)) used.add(name);
      expect([...used].sort()).toEqual([...TOOL_NAMES].sort());
    });

    it.each(examples)('example %p is recognised', async (example) => {
      expect(await callsFor(example)).toHaveLength(1);
    });
  });
});
