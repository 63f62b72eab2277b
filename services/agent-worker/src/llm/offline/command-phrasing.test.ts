import { getTool, parseToolArgs } from '@assistant/shared';
import { OfflinePlanner } from '../offline.planner';

// One command at a time, and the ways people type it; chaining, merged turns and text answers are in
// offline.planner.test.ts, reminder times in reminder-time.test.ts.
const NOW = new Date('2025-01-15T10:00:00Z');
const tools = [
  ...['create_folder', 'create_document', 'rename_folder', 'rename_document', 'move_document', 'delete_folder', 'delete_document'],
  ...['get_folder_contents', 'search_documents', 'save_habit', 'update_habit', 'delete_habit', 'list_habits', 'create_reminder'],
  ...['list_reminders', 'delete_reminder', 'create_goal', 'list_goals', 'delete_goal', 'remember'],
].map((name) => ({ name, description: name, parameters: { type: 'object' } }));

/** The calls' names and arguments, each checked by its tool's own schema, as the tool worker will. */
async function callsFor(text: string): Promise<Array<[string, Record<string, unknown>]>> {
  const response = await new OfflinePlanner({ now: () => NOW }).complete({
    model: 'offline',
    messages: [{ role: 'user', content: text }],
    tools,
    onToken: () => undefined,
  });
  return response.toolCalls.map((call) => {
    const args = JSON.parse(call.arguments) as Record<string, unknown>;
    const spec = getTool(call.name);
    expect(spec && parseToolArgs(spec, args).error).toBeUndefined();
    return [call.name, args];
  });
}

describe('OfflinePlanner commands', () => {
  describe('single commands', () => {
    it.each<[string, string, Record<string, unknown>]>([
      // Folders
      ['Create a new folder Work', 'create_folder', { name: 'Work' }],
      ['new folder Work', 'create_folder', { name: 'Work' }],
      ['create folder Reports in Work', 'create_folder', { name: 'Reports', parent_folder_id: 'Work' }],
      ['create folder Reports inside folder_1', 'create_folder', { name: 'Reports', parent_folder_id: 'folder_1' }],
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
      ['novo hábito ler todos os dias', 'save_habit', { name: 'ler', frequency: 'daily' }],
      ['novo hábito correr todo dia', 'save_habit', { name: 'correr', frequency: 'daily' }],
      ['criar hábito faxina semanal', 'save_habit', { name: 'faxina', frequency: 'weekly' }],
      ['create habit yoga every weekday', 'save_habit', { name: 'yoga', frequency: 'weekdays' }],
      ['criar hábito de meditação diária', 'save_habit', { name: 'meditação', frequency: 'daily' }],
      ['create a habit of meditating daily', 'save_habit', { name: 'meditating', frequency: 'daily' }],
      ['create a habit to read', 'save_habit', { name: 'read' }],
      // How often said before the noun in English, right after it in Portuguese.
      ['add a daily habit meditate', 'save_habit', { name: 'meditate', frequency: 'daily' }],
      ['daily habit read 10 pages', 'save_habit', { name: 'read 10 pages', frequency: 'daily' }],
      ['create a new weekly habit of reviewing the week', 'save_habit', { name: 'reviewing the week', frequency: 'weekly' }],
      ['new habit stretch daily', 'save_habit', { name: 'stretch', frequency: 'daily' }],
      ['criar hábito diário meditar', 'save_habit', { name: 'meditar', frequency: 'daily' }],
      ['novo hábito semanal de faxina', 'save_habit', { name: 'faxina', frequency: 'weekly' }],
      ['criar hábito mensalidade', 'save_habit', { name: 'mensalidade' }],
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
      ['cancel reminder reminder_2', 'delete_reminder', { reminder_id: 'reminder_2' }],
      ['cancelar o lembrete reminder_2', 'delete_reminder', { reminder_id: 'reminder_2' }],
      // A reminder is named by what it reminds of.
      ['delete the reminder to drink water', 'delete_reminder', { reminder_id: 'drink water' }],
      ['delete my reminder about the meeting', 'delete_reminder', { reminder_id: 'the meeting' }],
      ['apagar o lembrete de beber água', 'delete_reminder', { reminder_id: 'beber água' }],
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
});
