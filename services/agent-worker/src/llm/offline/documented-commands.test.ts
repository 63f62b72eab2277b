import { getTool, parseToolArgs } from '@assistant/shared';
import { OfflinePlanner } from '../offline.planner';

// Every command the contract (section 9) and the README name, and the ways a user types them, with
// the exact calls. Said on Monday 23 November 2026, 10:00 in São Paulo.
const NOW = new Date('2026-11-23T13:00:00Z');
const names = [
  ...['create_folder', 'create_document', 'rename_folder', 'rename_document', 'move_document', 'delete_folder', 'delete_document'],
  ...['get_folder_contents', 'search_documents', 'save_habit', 'update_habit', 'delete_habit', 'list_habits', 'create_reminder'],
  ...['list_reminders', 'delete_reminder', 'create_goal', 'list_goals', 'delete_goal', 'remember'],
];
const tools = names.map((name) => ({ name, description: name, parameters: { type: 'object' } }));

async function callsFor(text: string): Promise<Array<[string, Record<string, unknown>]>> {
  const response = await new OfflinePlanner({ now: () => NOW }).complete({
    model: 'offline',
    messages: [{ role: 'user', content: text }],
    tools,
    onToken: () => undefined,
    timezone: 'America/Sao_Paulo',
  });
  return response.toolCalls.map((call) => {
    const args = JSON.parse(call.arguments) as Record<string, unknown>;
    const spec = getTool(call.name);
    expect(spec && parseToolArgs(spec, args).error).toBeUndefined();
    return [call.name, args];
  });
}

type Case = [string, string, Record<string, unknown>];

const CONTRACT: Case[] = [
  ['create folder Work', 'create_folder', { name: 'Work' }],
  ['criar hábito meditação diária', 'save_habit', { name: 'meditação', frequency: 'daily' }],
  ['rename document Plan to Plan 2026', 'rename_document', { document_id: 'Plan', new_title: 'Plan 2026' }],
  ['list habits', 'list_habits', {}],
  ['remind me to drink water at 15:00', 'create_reminder', { text: 'drink water', at: '2026-11-23T15:00:00' }],
];

const README: Case[] = [
  ['create document Plan in Work', 'create_document', { title: 'Plan', folder_id: 'Work' }],
  ['list folder Work', 'get_folder_contents', { folder_id: 'Work' }],
  ['criar pasta Trabalho', 'create_folder', { name: 'Trabalho' }],
  ['criar habito meditação', 'save_habit', { name: 'meditação' }],
  ['remember: I prefer tea', 'remember', { content: 'I prefer tea' }],
  ['lembrete: ligar às 15h', 'create_reminder', { text: 'ligar', at: '2026-11-23T15:00:00' }],
  ['create folder "Plano 2026"', 'create_folder', { name: 'Plano 2026' }],
  ['create folder “Plano 2026”', 'create_folder', { name: 'Plano 2026' }],
  ['create folder «Plano 2026»', 'create_folder', { name: 'Plano 2026' }],
  ['create habit rock and roll', 'save_habit', { name: 'rock and roll' }],
  ['remind me tomorrow at 9 to call mom', 'create_reminder', { text: 'call mom', at: '2026-11-24T09:00:00' }],
  ['remind me to call Ana at 3pm', 'create_reminder', { text: 'call Ana', at: '2026-11-23T15:00:00' }],
  ['remind me at half past 8 to call', 'create_reminder', { text: 'call', at: '2026-11-23T20:30:00' }],
  ['remind me at a quarter to 9 to call', 'create_reminder', { text: 'call', at: '2026-11-23T20:45:00' }],
  ['remind me at twenty past 8 to call', 'create_reminder', { text: 'call', at: '2026-11-23T20:20:00' }],
  ['remind me at ten to 9 to call', 'create_reminder', { text: 'call', at: '2026-11-23T20:50:00' }],
  ['remind me at noon to eat', 'create_reminder', { text: 'eat', at: '2026-11-23T12:00:00' }],
  ['remind me in 20 minutes to stretch', 'create_reminder', { text: 'stretch', at: '2026-11-23T10:20:00' }],
  ['remind me every Monday at 8 to run', 'create_reminder', { text: 'run', at: '2026-11-30T08:00:00', repeat: 'weekly' }],
  ['remind me on Mondays at 8 to run', 'create_reminder', { text: 'run', at: '2026-11-30T08:00:00', repeat: 'weekly' }],
  ['remind me every day at 8 to run', 'create_reminder', { text: 'run', at: '2026-11-24T08:00:00', repeat: 'daily' }],
  ['remind me every weekday at 8 to run', 'create_reminder', { text: 'run', at: '2026-11-24T08:00:00', repeat: 'weekdays' }],
  ['remind me every month at 8 to pay', 'create_reminder', { text: 'pay', at: '2026-11-24T08:00:00', repeat: 'monthly' }],
  ['remind me on the 5th at 9 to pay', 'create_reminder', { text: 'pay', at: '2026-12-05T09:00:00' }],
  ['remind me from 3pm to 4pm to study', 'create_reminder', { text: 'study', at: '2026-11-23T15:00:00' }],
  ['remind me between 3 and 4pm to study', 'create_reminder', { text: 'study', at: '2026-11-23T15:00:00' }],
  ['me lembra às 15h de ligar para Ana', 'create_reminder', { text: 'ligar para Ana', at: '2026-11-23T15:00:00' }],
  ['me lembra às 8 e meia de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-23T20:30:00' }],
  ['me lembra às 8 e quinze de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-23T20:15:00' }],
  ['me lembra 8h15 de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-24T08:15:00' }],
  ['me lembra quinze para as 9 de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-23T20:45:00' }],
  ['me lembra às oito de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-23T20:00:00' }],
  ['me lembra amanhã às 9 de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-24T09:00:00' }],
  ['me lembra às 15h de amanhã de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-24T15:00:00' }],
  ['me lembra amanhã de manhã às 8h de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-24T08:00:00' }],
  ['me lembra ao meio-dia de almoçar', 'create_reminder', { text: 'almoçar', at: '2026-11-23T12:00:00' }],
  ['me lembra à meia-noite de dormir', 'create_reminder', { text: 'dormir', at: '2026-11-24T00:00:00' }],
  ['me lembra daqui a 20 minutos de alongar', 'create_reminder', { text: 'alongar', at: '2026-11-23T10:20:00' }],
  ['me lembra toda segunda às 8 de regar', 'create_reminder', { text: 'regar', at: '2026-11-30T08:00:00', repeat: 'weekly' }],
  ['me lembra na próxima segunda às 8 de regar', 'create_reminder', { text: 'regar', at: '2026-11-30T08:00:00' }],
  ['me lembra segunda que vem às 8 de regar', 'create_reminder', { text: 'regar', at: '2026-11-30T08:00:00' }],
  ['me lembra na próxima semana às 8 de regar', 'create_reminder', { text: 'regar', at: '2026-11-30T08:00:00' }],
  ['me lembra todos os domingos às 8 de regar', 'create_reminder', { text: 'regar', at: '2026-11-29T08:00:00', repeat: 'weekly' }],
  ['me lembra aos domingos às 8 de regar', 'create_reminder', { text: 'regar', at: '2026-11-29T08:00:00', repeat: 'weekly' }],
  ['me lembra todo dia às 7 de tomar remédio', 'create_reminder', { text: 'tomar remédio', at: '2026-11-24T07:00:00', repeat: 'daily' }],
  ['me lembra nos dias úteis às 7 de sair', 'create_reminder', { text: 'sair', at: '2026-11-24T07:00:00', repeat: 'weekdays' }],
  ['me lembra todo mês às 7 de pagar', 'create_reminder', { text: 'pagar', at: '2026-11-24T07:00:00', repeat: 'monthly' }],
  ['me lembra no dia 5 às 7 de pagar', 'create_reminder', { text: 'pagar', at: '2026-12-05T07:00:00' }],
  ['me lembra todo dia 5 às 7 de pagar', 'create_reminder', { text: 'pagar', at: '2026-12-05T07:00:00', repeat: 'monthly' }],
  ['me lembra das 15h às 16h de estudar', 'create_reminder', { text: 'estudar', at: '2026-11-23T15:00:00' }],
  ['me lembra entre 15h e 16h de estudar', 'create_reminder', { text: 'estudar', at: '2026-11-23T15:00:00' }],
  ['me lembra às 8 da noite de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-23T20:00:00' }],
  ['me lembra em 2h de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-23T12:00:00' }],
  ['me lembra as 15:00 de ligar', 'create_reminder', { text: 'ligar', at: '2026-11-23T15:00:00' }],
];

// What people type on a phone.
const VARIANTS: Case[] = [
  ['Create Folder Work', 'create_folder', { name: 'Work' }],
  ['CRIAR HABITO MEDITAÇÃO DIÁRIA', 'save_habit', { name: 'MEDITAÇÃO', frequency: 'daily' }],
  ['criar habito meditacao diaria', 'save_habit', { name: 'meditacao', frequency: 'daily' }],
  ['create folder Work ;)', 'create_folder', { name: 'Work' }],
  ['create folder Work!! 🙂', 'create_folder', { name: 'Work' }],
  ['please create a folder called Work', 'create_folder', { name: 'Work' }],
  ['crie uma pasta chamada Trabalho, por favor', 'create_folder', { name: 'Trabalho' }],
  ['rename document "Plan" to "Plan 2026"', 'rename_document', { document_id: 'Plan', new_title: 'Plan 2026' }],
  ['rename the document Plan to Plan 2026.', 'rename_document', { document_id: 'Plan', new_title: 'Plan 2026' }],
  ['delete folder "Old Stuff"', 'delete_folder', { folder_id: 'Old Stuff' }],
  ['apague a pasta “Coisas Velhas”', 'delete_folder', { folder_id: 'Coisas Velhas' }],
  ['Remind me to drink water at 15:00.', 'create_reminder', { text: 'drink water', at: '2026-11-23T15:00:00' }],
  ['remind me at 3pm tomorrow to call Ana', 'create_reminder', { text: 'call Ana', at: '2026-11-24T15:00:00' }],
  ['me lembra de ligar 8 e meia da noite', 'create_reminder', { text: 'ligar', at: '2026-11-23T20:30:00' }],
  ['me lembra de ligar amanhã às 9', 'create_reminder', { text: 'ligar', at: '2026-11-24T09:00:00' }],
  ['remind me next month on the 5th at 9 to pay rent', 'create_reminder', { text: 'pay rent', at: '2026-12-05T09:00:00' }],
  ['create goal Run 10k by 31/12/2026', 'create_goal', { title: 'Run 10k', target_date: '2026-12-31' }],
  ['criar meta Correr 10k até 31/12/2026', 'create_goal', { title: 'Correr 10k', target_date: '2026-12-31' }],
];

describe('the commands the contract and the README name', () => {
  it.each([...CONTRACT, ...README, ...VARIANTS])('%p → %s', async (text, tool, args) => {
    expect(await callsFor(text)).toEqual([[tool, args]]);
  });
});
