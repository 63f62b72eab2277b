import { getTool, parseToolArgs } from '@assistant/shared';
import type { ChatResponse, ToolDefinitionForModel } from '../chat-model';
import { OFFLINE_HELP, OFFLINE_HELP_PT, OfflinePlanner } from '../offline.planner';
import { OFFLINE_TEXTS } from './help-text';

// The offline planner's reminders (README "Reminders"); its other commands are in offline.planner.test.ts.
const tools: ToolDefinitionForModel[] = ['create_reminder', 'remember'].map((name) => ({
  name,
  description: name,
  parameters: { type: 'object' },
}));
// Monday 23 November 2026, 10:00 in São Paulo (13:00 UTC): every `at` is that zone's wall clock.
const MONDAY_10AM = new Date('2026-11-23T13:00:00Z');
const ZONE = 'America/Sao_Paulo';

function plan(text: string, now = MONDAY_10AM, timezone: string | undefined = ZONE): Promise<ChatResponse> {
  return new OfflinePlanner({ now: () => now }).complete({
    model: 'offline',
    messages: [{ role: 'user', content: text }],
    tools,
    onToken: () => undefined,
    ...(timezone === undefined ? {} : { timezone }),
  });
}

/** The calls' names and arguments, each checked by its tool's own schema, as the tool worker will. */
async function reminderFor(text: string, now = MONDAY_10AM, timezone: string | undefined = ZONE) {
  const response = await plan(text, now, timezone);
  return response.toolCalls.map((call) => {
    const args = JSON.parse(call.arguments) as Record<string, unknown>;
    const spec = getTool(call.name);
    expect(spec && parseToolArgs(spec, args).error).toBeUndefined();
    return [call.name, args];
  });
}

describe('offline reminders', () => {
  it.each<[string, Record<string, unknown>]>([
    // The forms people write, anywhere in the sentence.
    ['remind me to call Ana at 15:00', { text: 'call Ana', at: '2026-11-23T15:00:00' }],
    ['remind me at 3pm to call Ana', { text: 'call Ana', at: '2026-11-23T15:00:00' }],
    ['remind me tomorrow at 9 to call mom', { text: 'call mom', at: '2026-11-24T09:00:00' }],
    ['remind me to call mom tomorrow at 9', { text: 'call mom', at: '2026-11-24T09:00:00' }],
    ['remind me in 20 minutes to stretch', { text: 'stretch', at: '2026-11-23T10:20:00' }],
    ['remind me in an hour and a half to call', { text: 'call', at: '2026-11-23T11:30:00' }],
    ['remind me in one and a half hours to call', { text: 'call', at: '2026-11-23T11:30:00' }],
    ['remind me every Monday at 8 to water the plants', { text: 'water the plants', at: '2026-11-30T08:00:00', repeat: 'weekly' }],
    ['remind me to water the plants at 8 every Monday', { text: 'water the plants', at: '2026-11-30T08:00:00', repeat: 'weekly' }],
    ['remind me every Tuesday at 8 to run', { text: 'run', at: '2026-11-24T08:00:00', repeat: 'weekly' }],
    ['me lembra às 15h de ligar para Ana', { text: 'ligar para Ana', at: '2026-11-23T15:00:00' }],
    ['me lembra de ligar para Ana às 15h', { text: 'ligar para Ana', at: '2026-11-23T15:00:00' }],
    ['me lembra amanhã às 9 de ligar para a mãe', { text: 'ligar para a mãe', at: '2026-11-24T09:00:00' }],
    ['me lembra daqui a 20 minutos de alongar', { text: 'alongar', at: '2026-11-23T10:20:00' }],
    ['me lembra toda segunda às 8 de regar as plantas', { text: 'regar as plantas', at: '2026-11-30T08:00:00', repeat: 'weekly' }],
    ['me lembra todo dia às 7 de tomar remédio', { text: 'tomar remédio', at: '2026-11-24T07:00:00', repeat: 'daily' }],
    // Clock forms and rolling over to the next day.
    ['remind me to call Ana at 3:30 pm', { text: 'call Ana', at: '2026-11-23T15:30:00' }],
    ['remind me to call Ana at 12am', { text: 'call Ana', at: '2026-11-24T00:00:00' }],
    ['remind me to eat at 12pm', { text: 'eat', at: '2026-11-23T12:00:00' }],
    // 10:00 is not after now (10:00): the next one is tomorrow.
    ['remind me to stretch at 10:00 am', { text: 'stretch', at: '2026-11-24T10:00:00' }],
    ['remind me to stretch at 09:59', { text: 'stretch', at: '2026-11-24T09:59:00' }],
    ['remind me to stretch at 10:00', { text: 'stretch', at: '2026-11-24T10:00:00' }],
    ['remind me to stretch at 9:59', { text: 'stretch', at: '2026-11-24T09:59:00' }],
    ['remind me to stretch at 10:01', { text: 'stretch', at: '2026-11-23T10:01:00' }],
    ['remind me to run tomorrow at 11', { text: 'run', at: '2026-11-24T11:00:00' }],
    ['remind me to run at 7am tomorrow', { text: 'run', at: '2026-11-24T07:00:00' }],
    ['set a reminder to run at 7am tomorrow', { text: 'run', at: '2026-11-24T07:00:00' }],
    ['remind me at half past 8 to call', { text: 'call', at: '2026-11-23T20:30:00' }],
    ['remind me to call at half past eight pm', { text: 'call', at: '2026-11-23T20:30:00' }],
    ['remind me tomorrow at a quarter to 9 to call', { text: 'call', at: '2026-11-24T08:45:00' }],
    ['remind me to call at quarter past 10 am', { text: 'call', at: '2026-11-23T10:15:00' }],
    ['remind me at twenty past 8 to call', { text: 'call', at: '2026-11-23T20:20:00' }],
    ['remind me at ten to 9 to call', { text: 'call', at: '2026-11-23T20:50:00' }],
    ['remind me at 5 past 6 pm to call', { text: 'call', at: '2026-11-23T18:05:00' }],
    ['remind me at twenty-five past eight to call', { text: 'call', at: '2026-11-23T20:25:00' }],
    ['remind me at 10 minutes to 9 to call', { text: 'call', at: '2026-11-23T20:50:00' }],
    ['remind me at half past 8 in the evening to call', { text: 'call', at: '2026-11-23T20:30:00' }],
    ['remind me at half past 8 in the morning to call', { text: 'call', at: '2026-11-24T08:30:00' }],
    // "o'clock" is said on a 12-hour clock: at 10:00, "3 o'clock" is this afternoon, not 3 in the night.
    ["remind me at 3 o'clock to call Ana", { text: 'call Ana', at: '2026-11-23T15:00:00' }],
    ["remind me at three o'clock to call", { text: 'call', at: '2026-11-23T15:00:00' }],
    ["remind me at 11 o'clock to call", { text: 'call', at: '2026-11-23T11:00:00' }],
    ["remind me at 9 o'clock to call", { text: 'call', at: '2026-11-23T21:00:00' }],
    ["remind me tomorrow at 9 o'clock to call", { text: 'call', at: '2026-11-24T09:00:00' }],
    ["remind me at 3 o'clock in the morning to call", { text: 'call', at: '2026-11-24T03:00:00' }],
    // So is a bare hour, in either language: at 10:00, "at 7" is 19:00 today; "at 19", "07:00" and
    // "7h" are read as written, and a repeat keeps the hour as said.
    ['remind me at 7 to call mom', { text: 'call mom', at: '2026-11-23T19:00:00' }],
    ['remind me at 11 to call mom', { text: 'call mom', at: '2026-11-23T11:00:00' }],
    ['me lembra às 7 de ligar para a mãe', { text: 'ligar para a mãe', at: '2026-11-23T19:00:00' }],
    ['me lembra às 7 da manhã de ligar', { text: 'ligar', at: '2026-11-24T07:00:00' }],
    ['me lembra às 8 à noite de ligar', { text: 'ligar', at: '2026-11-23T20:00:00' }],
    ['remind me at 19 to call mom', { text: 'call mom', at: '2026-11-23T19:00:00' }],
    ['me lembra às 19 de ligar para a mãe', { text: 'ligar para a mãe', at: '2026-11-23T19:00:00' }],
    ['remind me at 07:00 to call mom', { text: 'call mom', at: '2026-11-24T07:00:00' }],
    ['me lembra às 7h de ligar', { text: 'ligar', at: '2026-11-24T07:00:00' }],
    ['remind me every day at 7 to call mom', { text: 'call mom', at: '2026-11-24T07:00:00', repeat: 'daily' }],
    // So is an hour with its minutes in words; a clock's digits ("8:30", "08:30"), "8h30" and
    // "8 horas e 30" are read as written.
    ['remind me at 8:30 to call mom', { text: 'call mom', at: '2026-11-24T08:30:00' }],
    ['me lembra às 8:30 de ligar', { text: 'ligar', at: '2026-11-24T08:30:00' }],
    ['me lembra às 8 e 30 de ligar', { text: 'ligar', at: '2026-11-23T20:30:00' }],
    ['remind me at half past 8 am to call mom', { text: 'call mom', at: '2026-11-24T08:30:00' }],
    ['remind me at ten to 9 am to call mom', { text: 'call mom', at: '2026-11-24T08:50:00' }],
    ['remind me today at 7 to call mom', { text: 'call mom', at: '2026-11-23T19:00:00' }],
    ['me lembra hoje às 7 de ligar', { text: 'ligar', at: '2026-11-23T19:00:00' }],
    // "at 15h" is an hour the way much of the world writes it, not "in 15 hours".
    ['remind me at 15h to call', { text: 'call', at: '2026-11-23T15:00:00' }],
    ['remind me to call at 15h30', { text: 'call', at: '2026-11-23T15:30:00' }],
    ['remind me in 2h to call', { text: 'call', at: '2026-11-23T12:00:00' }],
    // The day after tomorrow, not tomorrow.
    ['remind me the day after tomorrow at 9 to call', { text: 'call', at: '2026-11-25T09:00:00' }],
    ['remind me to call at 9 the day after tomorrow', { text: 'call', at: '2026-11-25T09:00:00' }],
    ['me lembra depois de amanhã às 9 de ligar', { text: 'ligar', at: '2026-11-25T09:00:00' }],
    ['me lembra de ligar às 15h depois de amanha', { text: 'ligar', at: '2026-11-25T15:00:00' }],
    // "for" before a time belongs to it.
    ['set a reminder for 3pm to call Ana', { text: 'call Ana', at: '2026-11-23T15:00:00' }],
    ['remind me to pay for lunch for tomorrow at 9', { text: 'pay for lunch', at: '2026-11-24T09:00:00' }],
    // "me avisa" is how many Brazilians ask for a reminder.
    ['me avisa às 15h de ligar', { text: 'ligar', at: '2026-11-23T15:00:00' }],
    ['me avise amanhã às 9 para ligar para a Ana', { text: 'ligar para a Ana', at: '2026-11-24T09:00:00' }],
    // "o'clock" and the part of the day, which chrono leaves in the text.
    ['remind me at 9 tomorrow morning to call', { text: 'call', at: '2026-11-24T09:00:00' }],
    ['remind me at 8 tomorrow evening to call', { text: 'call', at: '2026-11-24T20:00:00' }],
    ['remind me to call at 9 on Friday morning', { text: 'call', at: '2026-11-27T09:00:00' }],
    ['me lembra às 8 amanhã à noite de ligar', { text: 'ligar', at: '2026-11-24T20:00:00' }],
    ['me lembra à noite às 8 de ligar', { text: 'ligar', at: '2026-11-23T20:00:00' }],
    ["remind me at 3 o'clock pm to call", { text: 'call', at: '2026-11-23T15:00:00' }],
    ["remind me to call at 3 o'clock in the afternoon", { text: 'call', at: '2026-11-23T15:00:00' }],
    ['remind me at 8 in the evening to call', { text: 'call', at: '2026-11-23T20:00:00' }],
    ['remind me at 7:30 in the morning to run', { text: 'run', at: '2026-11-24T07:30:00' }],
    ['remind me tomorrow at 11 at night to sleep', { text: 'sleep', at: '2026-11-24T23:00:00' }],
    ['remind me at twelve at night to sleep', { text: 'sleep', at: '2026-11-24T00:00:00' }],
    ['remind me to move 5 after 6 steps at 9', { text: 'move 5 after 6 steps', at: '2026-11-23T21:00:00' }],
    ['me lembre de pagar a conta às 15:30', { text: 'pagar a conta', at: '2026-11-23T15:30:00' }],
    ['me lembre de pagar a conta as 15h30', { text: 'pagar a conta', at: '2026-11-23T15:30:00' }],
    ['me lembra às 15 horas de ligar', { text: 'ligar', at: '2026-11-23T15:00:00' }],
    ['me lembre às 8 da noite de ligar', { text: 'ligar', at: '2026-11-23T20:00:00' }],
    ['me lembre de ligar as 3 da tarde', { text: 'ligar', at: '2026-11-23T15:00:00' }],
    ['me lembre amanhã às 7h30 da manhã de correr', { text: 'correr', at: '2026-11-24T07:30:00' }],
    ['me lembre às 12 da noite de dormir', { text: 'dormir', at: '2026-11-24T00:00:00' }],
    ['me lembre às 8 e meia de ligar', { text: 'ligar', at: '2026-11-23T20:30:00' }],
    ['me lembre de ligar as 8h e meia', { text: 'ligar', at: '2026-11-24T08:30:00' }],
    ['me lembre amanhã às 7 e meia da noite de ligar', { text: 'ligar', at: '2026-11-24T19:30:00' }],
    ['me lembre de comprar 2 e meia dúzias às 9h', { text: 'comprar 2 e meia dúzias', at: '2026-11-24T09:00:00' }],
    // The part of the day makes a bare "8 e meia" an hour.
    ['me lembra de ligar 8 e meia da noite', { text: 'ligar', at: '2026-11-23T20:30:00' }],
    ['me lembra oito e quinze da manhã de ligar', { text: 'ligar', at: '2026-11-24T08:15:00' }],
    ['me lembra amanhã 7 e 45 da noite de ligar', { text: 'ligar', at: '2026-11-24T19:45:00' }],
    // Minutes after "e", minutes to the hour with "para", and hours said as words.
    ['me lembre às 8 e quinze de ligar', { text: 'ligar', at: '2026-11-23T20:15:00' }],
    ['me lembre 8h e quinze de ligar', { text: 'ligar', at: '2026-11-24T08:15:00' }],
    ['me lembre às 9 e 45 de ligar', { text: 'ligar', at: '2026-11-23T21:45:00' }],
    ['me lembre às 9 e quarenta e cinco de ligar', { text: 'ligar', at: '2026-11-23T21:45:00' }],
    ['me lembre às 9 horas e 30 minutos de ligar', { text: 'ligar', at: '2026-11-24T09:30:00' }],
    ['me lembre amanhã às 8 e quinze da noite de ligar', { text: 'ligar', at: '2026-11-24T20:15:00' }],
    ['me lembre quinze para as 9 de ligar', { text: 'ligar', at: '2026-11-23T20:45:00' }],
    ['me lembre de ligar às quinze para as 9', { text: 'ligar', at: '2026-11-23T20:45:00' }],
    ['me lembre 20 para as 9 da noite de ligar', { text: 'ligar', at: '2026-11-23T20:40:00' }],
    ['me lembre dez para o meio-dia de almoçar', { text: 'almoçar', at: '2026-11-23T11:50:00' }],
    ['me lembre às oito e meia de ligar', { text: 'ligar', at: '2026-11-23T20:30:00' }],
    ['me lembre de ligar às dez', { text: 'ligar', at: '2026-11-23T22:00:00' }],
    ['me lembre às oito da noite de ligar', { text: 'ligar', at: '2026-11-23T20:00:00' }],
    ['me lembra às 8 horas da manhã de ligar', { text: 'ligar', at: '2026-11-24T08:00:00' }],
    ['me lembra às 3 horas da tarde de ligar', { text: 'ligar', at: '2026-11-23T15:00:00' }],
    ['me lembre meio-dia e quinze de almoçar', { text: 'almoçar', at: '2026-11-23T12:15:00' }],
    ['me lembre de dar 10 para as 2 crianças às 15h', { text: 'dar 10 para as 2 crianças', at: '2026-11-23T15:00:00' }],
    ['me lembre de pagar as duas contas às 16h', { text: 'pagar as duas contas', at: '2026-11-23T16:00:00' }],
    // "às" typed without its accent; "as" before a count is still the article.
    ['me lembre de beber agua as 15:00', { text: 'beber agua', at: '2026-11-23T15:00:00' }],
    ['me lembra amanha as 9 de ligar para a mae', { text: 'ligar para a mae', at: '2026-11-24T09:00:00' }],
    ['me lembre de pagar as 2 contas as 16:30', { text: 'pagar as 2 contas', at: '2026-11-23T16:30:00' }],
    ['me lembra em 2 horas de sair', { text: 'sair', at: '2026-11-23T12:00:00' }],
    ['me lembra dentro de meia hora de sair', { text: 'sair', at: '2026-11-23T10:30:00' }],
    ['me lembra daqui a 1h de ligar', { text: 'ligar', at: '2026-11-23T11:00:00' }],
    ['me lembre em 30min de sair', { text: 'sair', at: '2026-11-23T10:30:00' }],
    ['me lembre daqui a uma hora e meia de ligar', { text: 'ligar', at: '2026-11-23T11:30:00' }],
    ['me lembre daqui a 1h30 de ligar', { text: 'ligar', at: '2026-11-23T11:30:00' }],
    ['me lembre em 2 horas e 15 minutos de ligar', { text: 'ligar', at: '2026-11-23T12:15:00' }],
    ['lembrete tomar remédio às 7h amanhã', { text: 'tomar remédio', at: '2026-11-24T07:00:00' }],
    ['novo lembrete tomar remédio amanhã às 22h', { text: 'tomar remédio', at: '2026-11-24T22:00:00' }],
    ['me lembra de comprar pão e leite às 8h', { text: 'comprar pão e leite', at: '2026-11-24T08:00:00' }],
    // "lembrar" starts a reminder only after "me": here it is part of the text.
    ['me lembra de pagar a conta e lembrar a Maria às 9h', { text: 'pagar a conta e lembrar a Maria', at: '2026-11-24T09:00:00' }],
    ['remind me to log in at 9', { text: 'log in', at: '2026-11-23T21:00:00' }],
    ['remind me to call Ana at noon', { text: 'call Ana', at: '2026-11-23T12:00:00' }],
    ['remind me to sleep at midnight', { text: 'sleep', at: '2026-11-24T00:00:00' }],
    ['me lembre de ligar ao meio-dia', { text: 'ligar', at: '2026-11-23T12:00:00' }],
    ['me lembre de ligar ao meio dia', { text: 'ligar', at: '2026-11-23T12:00:00' }],
    ['me lembre de ligar meio-dia', { text: 'ligar', at: '2026-11-23T12:00:00' }],
    ['me lembre ao meio-dia e meia de almoçar', { text: 'almoçar', at: '2026-11-23T12:30:00' }],
    ['me lembra amanhã ao meio-dia de ligar', { text: 'ligar', at: '2026-11-24T12:00:00' }],
    ['me lembre de dormir à meia-noite', { text: 'dormir', at: '2026-11-24T00:00:00' }],
    ['me lembre de dormir a meia noite', { text: 'dormir', at: '2026-11-24T00:00:00' }],
    ['remind me to call Ana at 2026-12-01 10:00', { text: 'call Ana', at: '2026-12-01T10:00:00' }],
    // "de" between two time phrases is part of them.
    ['me lembre amanhã de manhã às 8h de ligar', { text: 'ligar', at: '2026-11-24T08:00:00' }],
    ['me lembre às 15h de amanhã de ligar', { text: 'ligar', at: '2026-11-24T15:00:00' }],
    ['me lembre de ligar às 15h de amanhã', { text: 'ligar', at: '2026-11-24T15:00:00' }],
    // "próxima segunda" and "segunda que vem" are the next Monday, the words out of the text.
    ['me lembre na próxima segunda às 8h de ligar', { text: 'ligar', at: '2026-11-30T08:00:00' }],
    ['me lembre na proxima quarta às 8h de ligar', { text: 'ligar', at: '2026-11-25T08:00:00' }],
    ['me lembre segunda que vem às 8h de ligar', { text: 'ligar', at: '2026-11-30T08:00:00' }],
    ['me lembre de ligar na sexta-feira que vem às 8h', { text: 'ligar', at: '2026-11-27T08:00:00' }],
    // Said on a Monday at 10:00, "next Monday" is a week on even when its time is still ahead today.
    ['me lembre na próxima segunda às 11h de ligar', { text: 'ligar', at: '2026-11-30T11:00:00' }],
    ['me lembre segunda que vem às 11h de ligar', { text: 'ligar', at: '2026-11-30T11:00:00' }],
    ['remind me next monday at 11 to call', { text: 'call', at: '2026-11-30T11:00:00' }],
    ['remind me next friday at 11 to call', { text: 'call', at: '2026-11-27T11:00:00' }],
    ['remind me on monday at 11 to call', { text: 'call', at: '2026-11-23T11:00:00' }],
    ['remind me on the next monday at 11 to call', { text: 'call', at: '2026-11-30T11:00:00' }],
    ['me lembre de ver o filme nesta sexta às 20h', { text: 'ver o filme', at: '2026-11-27T20:00:00' }],
    // "next week" is a week from today, in both languages.
    ['remind me next week at 9 to call', { text: 'call', at: '2026-11-30T09:00:00' }],
    ['me lembre na próxima semana às 9h de ligar', { text: 'ligar', at: '2026-11-30T09:00:00' }],
    ['me lembre semana que vem às 9h de ligar', { text: 'ligar', at: '2026-11-30T09:00:00' }],
    // "of" / "da" / "do" before what to remind of is no part of it.
    ['remind me of the meeting at 3pm', { text: 'the meeting', at: '2026-11-23T15:00:00' }],
    ['me lembre da reunião de 15h às 16h', { text: 'reunião', at: '2026-11-23T15:00:00' }],
    ['me lembra do remédio às 22h', { text: 'remédio', at: '2026-11-23T22:00:00' }],
    // A range is a reminder at its start, both ends out of the text.
    ['me lembre de 15h às 16h de reunião', { text: 'reunião', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar das 15h às 16h', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar das 15 às 16h', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar de 15:00 às 16:00', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar entre 15h e 16h', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar das 15h até as 16h', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar 15h-16h', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar das 3 às 4 da tarde', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['me lembre de estudar das 8 às 20h', { text: 'estudar', at: '2026-11-24T08:00:00' }],
    ['remind me to study from 3pm to 4pm', { text: 'study', at: '2026-11-23T15:00:00' }],
    ['remind me to study between 3pm and 4pm', { text: 'study', at: '2026-11-23T15:00:00' }],
    // chrono reads no bare first hour: "between 3 and 4pm" is one result, its end.
    ['remind me to study between 3 and 4pm', { text: 'study', at: '2026-11-23T15:00:00' }],
    ['remind me between 3 and 4pm to study', { text: 'study', at: '2026-11-23T15:00:00' }],
    ['remind me tomorrow between 9:30 and 11 to study', { text: 'study', at: '2026-11-24T09:30:00' }],
    ['me lembre de estudar entre 3 e 4 da tarde', { text: 'estudar', at: '2026-11-23T15:00:00' }],
    ['remind me to study tomorrow from 3 to 4pm', { text: 'study', at: '2026-11-24T15:00:00' }],
    ['remind me to give 2 to 3 people a call at 5pm', { text: 'give 2 to 3 people a call', at: '2026-11-23T17:00:00' }],
    ['remind me to read pages 10 - 20 at 9pm', { text: 'read pages 10 - 20', at: '2026-11-23T21:00:00' }],
    // Dates.
    ['remind me to call Ana on December 24 at 10:00', { text: 'call Ana', at: '2026-12-24T10:00:00' }],
    ['remind me to call Ana at 10:00 on 2026-12-01', { text: 'call Ana', at: '2026-12-01T10:00:00' }],
    ['me lembra no dia 24 de dezembro às 10h de comprar presentes', { text: 'comprar presentes', at: '2026-12-24T10:00:00' }],
    ['remind me in 2 days at 9 to pay', { text: 'pay', at: '2026-11-25T09:00:00' }],
    ['me lembra daqui a 2 dias às 9h de pagar', { text: 'pagar', at: '2026-11-25T09:00:00' }],
    // A day of the month alone: this month's while still ahead, else next month's.
    ['remind me to pay rent on the 5th at 9:00', { text: 'pay rent', at: '2026-12-05T09:00:00' }],
    ['remind me on the 23rd at 11 to pay rent', { text: 'pay rent', at: '2026-11-23T11:00:00' }],
    ['remind me on the 23rd at 9 to pay rent', { text: 'pay rent', at: '2026-12-23T09:00:00' }],
    ['remind me to pay rent on the 31st at 9:00', { text: 'pay rent', at: '2026-11-30T09:00:00' }],
    ['remind me to pay rent every month on the 5th at 9', { text: 'pay rent', at: '2026-12-05T09:00:00', repeat: 'monthly' }],
    ['remind me on the 5th of every month at 9 to pay rent', { text: 'pay rent', at: '2026-12-05T09:00:00', repeat: 'monthly' }],
    // A monthly reminder starts in a month with that day: its first day is the one it keeps.
    ['remind me to pay rent every month on the 31st at 9:00', { text: 'pay rent', at: '2026-12-31T09:00:00', repeat: 'monthly' }],
    ['me lembre todo mes no dia 31 as 9h de pagar o aluguel', { text: 'pagar o aluguel', at: '2026-12-31T09:00:00', repeat: 'monthly' }],
    ['me lembre dia 15 às 9h de pagar o aluguel', { text: 'pagar o aluguel', at: '2026-12-15T09:00:00' }],
    ['me lembre de pagar o aluguel no dia 5 as 9h', { text: 'pagar o aluguel', at: '2026-12-05T09:00:00' }],
    ['me lembre todo dia 5 às 9h de pagar o aluguel', { text: 'pagar o aluguel', at: '2026-12-05T09:00:00', repeat: 'monthly' }],
    ['me lembre no dia 5 de cada mês às 9h de pagar', { text: 'pagar', at: '2026-12-05T09:00:00', repeat: 'monthly' }],
    ['me lembre todo dia 7h de tomar remédio', { text: 'tomar remédio', at: '2026-11-24T07:00:00', repeat: 'daily' }],
    ['remind me to read the 5th chapter at 9', { text: 'read the 5th chapter', at: '2026-11-23T21:00:00' }],
    // Repeats.
    ['remind me to take pills at 8am every day', { text: 'take pills', at: '2026-11-24T08:00:00', repeat: 'daily' }],
    ['remind me every weekday at 8 to stand up', { text: 'stand up', at: '2026-11-24T08:00:00', repeat: 'weekdays' }],
    ['remind me to water the plants at 18:00 every week', { text: 'water the plants', at: '2026-11-23T18:00:00', repeat: 'weekly' }],
    ['remind me to pay rent every month at 9', { text: 'pay rent', at: '2026-11-24T09:00:00', repeat: 'monthly' }],
    ['me lembra de beber água às 11h diariamente', { text: 'beber água', at: '2026-11-23T11:00:00', repeat: 'daily' }],
    ['me lembra nos dias úteis às 8 de levantar', { text: 'levantar', at: '2026-11-24T08:00:00', repeat: 'weekdays' }],
    ['me lembra de limpar a casa às 16h toda semana', { text: 'limpar a casa', at: '2026-11-23T16:00:00', repeat: 'weekly' }],
    ['me lembra de pagar o aluguel todo mês às 9', { text: 'pagar o aluguel', at: '2026-11-24T09:00:00', repeat: 'monthly' }],
    // A weekday in the plural is weekly on that day.
    ['me lembre todos os domingos às 10h de ligar pra mãe', { text: 'ligar pra mãe', at: '2026-11-29T10:00:00', repeat: 'weekly' }],
    ['me lembre todas as sextas às 18h de sair', { text: 'sair', at: '2026-11-27T18:00:00', repeat: 'weekly' }],
    ['me lembre aos domingos às 10h de ligar', { text: 'ligar', at: '2026-11-29T10:00:00', repeat: 'weekly' }],
    ['me lembre nas segundas-feiras às 8h de correr', { text: 'correr', at: '2026-11-30T08:00:00', repeat: 'weekly' }],
    ['me lembre de correr às tercas às 7h', { text: 'correr', at: '2026-11-24T07:00:00', repeat: 'weekly' }],
    ['me lembre aos sábados às 9h de regar', { text: 'regar', at: '2026-11-28T09:00:00', repeat: 'weekly' }],
    ['remind me on sundays at 10 to call mom', { text: 'call mom', at: '2026-11-29T10:00:00', repeat: 'weekly' }],
    ['remind me to run on Mondays at 9', { text: 'run', at: '2026-11-30T09:00:00', repeat: 'weekly' }],
    ['remind me every sunday at 10 to call mom', { text: 'call mom', at: '2026-11-29T10:00:00', repeat: 'weekly' }],
  ])('%p', async (text, args) => {
    expect(await reminderFor(text)).toEqual([['create_reminder', args]]);
  });

  it('reads the time in the user zone: the same message and instant give each zone its own wall clock', async () => {
    // 13:00 UTC is 22:00 on Monday in Tokyo: its tomorrow is Tuesday too, but at Tokyo's 09:00.
    expect(await reminderFor('remind me tomorrow at 9 to call mom', MONDAY_10AM, 'Asia/Tokyo')).toEqual([
      ['create_reminder', { text: 'call mom', at: '2026-11-24T09:00:00' }],
    ]);
    const lateMonday = new Date('2026-11-24T01:30:00Z'); // Monday 22:30 in São Paulo, Tuesday 01:30 UTC
    expect(await reminderFor('remind me tomorrow at 9 to call mom', lateMonday)).toEqual([
      ['create_reminder', { text: 'call mom', at: '2026-11-24T09:00:00' }],
    ]);
    expect(await reminderFor('remind me tomorrow at 9 to call mom', lateMonday, 'UTC')).toEqual([
      ['create_reminder', { text: 'call mom', at: '2026-11-25T09:00:00' }],
    ]);
    expect(await reminderFor('remind me in 20 minutes to stretch', lateMonday, 'Europe/Lisbon')).toEqual([
      ['create_reminder', { text: 'stretch', at: '2026-11-24T01:50:00' }],
    ]);
  });

  it('reads UTC when no zone or an unknown one is given', async () => {
    expect(await reminderFor('remind me to run at 15:00', MONDAY_10AM, undefined)).toEqual([
      ['create_reminder', { text: 'run', at: '2026-11-23T15:00:00' }],
    ]);
    expect(await reminderFor('remind me to run at 15:00', MONDAY_10AM, 'Mars/Olympus')).toEqual([
      ['create_reminder', { text: 'run', at: '2026-11-23T15:00:00' }],
    ]);
  });

  it('counts "in 2 hours" across a daylight-saving change as two real hours', async () => {
    // New York falls back at 02:00 on 1 November 2026: 00:30 EDT plus two hours is 01:30 EST.
    const beforeFallBack = new Date('2026-11-01T04:30:00Z');
    expect(await reminderFor('remind me in 2 hours to sleep', beforeFallBack, 'America/New_York')).toEqual([
      ['create_reminder', { text: 'sleep', at: '2026-11-01T01:30:00' }],
    ]);
  });

  it('keeps the time the user said when it falls in a daylight-saving gap', async () => {
    // New York springs forward at 02:00 on 14 March 2027; the tool worker decides what 02:30 means.
    const saturday = new Date('2027-03-13T15:00:00Z');
    expect(await reminderFor('remind me every day at 2:30 to check the backup', saturday, 'America/New_York')).toEqual([
      ['create_reminder', { text: 'check the backup', at: '2027-03-14T02:30:00', repeat: 'daily' }],
    ]);
  });

  it('rolls over the end of the month and a weekday repeat skips the weekend', async () => {
    const fridayNight = new Date('2026-11-28T01:30:00Z'); // Friday 27 November, 22:30 in São Paulo
    expect(await reminderFor('remind me to sleep at 22:00', fridayNight)).toEqual([
      ['create_reminder', { text: 'sleep', at: '2026-11-28T22:00:00' }],
    ]);
    expect(await reminderFor('remind me every weekday at 8 to stand up', fridayNight)).toEqual([
      ['create_reminder', { text: 'stand up', at: '2026-11-30T08:00:00', repeat: 'weekdays' }],
    ]);
    const monthEnd = new Date('2026-12-01T02:30:00Z'); // 30 November, 23:30 in São Paulo
    expect(await reminderFor('me lembra às 23h de dormir', monthEnd)).toEqual([
      ['create_reminder', { text: 'dormir', at: '2026-12-01T23:00:00' }],
    ]);
  });

  it('puts a day past the end of the month on its last day, or a monthly reminder in the next month that has it', async () => {
    const lastOfJanuary = new Date('2027-01-31T15:00:00Z'); // 31 January, 12:00 in São Paulo
    expect(await reminderFor('remind me to pay rent on the 30th at 9:00', lastOfJanuary)).toEqual([
      ['create_reminder', { text: 'pay rent', at: '2027-02-28T09:00:00' }],
    ]);
    expect(await reminderFor('me lembre todo mês no dia 31 às 9h de pagar o aluguel', lastOfJanuary)).toEqual([
      ['create_reminder', { text: 'pagar o aluguel', at: '2027-03-31T09:00:00', repeat: 'monthly' }],
    ]);
  });

  it.each<[string, Record<string, unknown>]>([
    ['remind me next month on the 5th at 9 to pay rent', { text: 'pay rent', at: '2026-12-05T09:00:00' }],
    ['remind me on the 5th of next month at 9 to pay rent', { text: 'pay rent', at: '2026-12-05T09:00:00' }],
    ['remind me to pay rent on the 5th next month at 9am', { text: 'pay rent', at: '2026-12-05T09:00:00' }],
    ['me lembra no dia 5 do mês que vem às 9 de pagar', { text: 'pagar', at: '2026-12-05T09:00:00' }],
    ['me lembra mês que vem no dia 5 às 9h de pagar', { text: 'pagar', at: '2026-12-05T09:00:00' }],
    ['me lembra no próximo mês, dia 5, às 9h de pagar', { text: 'pagar', at: '2026-12-05T09:00:00' }],
    // Without a day, like "next week": a month from today.
    ['remind me next month at 9 to renew the lease', { text: 'renew the lease', at: '2026-12-03T09:00:00' }],
    ['me lembra mês que vem às 9h de renovar', { text: 'renovar', at: '2026-12-03T09:00:00' }],
  ])('reads "next month" in %p said on 3 November: the day of next month, not of this one', async (text, args) => {
    const third = new Date('2026-11-03T13:00:00Z'); // Tuesday 3 November, 10:00 in São Paulo
    expect(await reminderFor(text, third)).toEqual([['create_reminder', args]]);
  });

  it.each<[string, Record<string, unknown>]>([
    // Tonight's 7:00 has gone: like a past "at 15:00", today's past time means tomorrow's.
    ['remind me at 7 tonight to call mom', { text: 'call mom', at: '2026-11-24T19:00:00' }],
    ['remind me tonight at 7 to call mom', { text: 'call mom', at: '2026-11-24T19:00:00' }],
    ['me lembra hoje à noite às 7 de ligar', { text: 'ligar', at: '2026-11-24T19:00:00' }],
    ['me lembra hoje às 7 da noite de ligar', { text: 'ligar', at: '2026-11-24T19:00:00' }],
    ['remind me today at 15:00 to call', { text: 'call', at: '2026-11-24T15:00:00' }],
    ['me lembra hoje às 15h de ligar', { text: 'ligar', at: '2026-11-24T15:00:00' }],
  ])('never sets %p, said at 20:30, in the past', async (text, args) => {
    const evening = new Date('2026-11-23T23:30:00Z'); // Monday 23 November, 20:30 in São Paulo
    expect(await reminderFor(text, evening)).toEqual([['create_reminder', args]]);
  });

  it('keeps "lembre que" for memory, not a reminder', async () => {
    expect(await reminderFor('lembre que eu acordo às 6h')).toEqual([['remember', { content: 'eu acordo às 6h' }]]);
  });

  it.each<[string, string]>([
    ['remind me to call Ana', OFFLINE_TEXTS.en.askTime],
    ['remind me tomorrow to call Ana', OFFLINE_TEXTS.en.askTime],
    ['remind me to call Ana at 25:00', OFFLINE_TEXTS.en.askTime],
    ['remind me to call Ana at 13pm', OFFLINE_TEXTS.en.askTime],
    ['remind me to call Ana at 10:75', OFFLINE_TEXTS.en.askTime],
    ['me lembra de ligar para a Ana', OFFLINE_TEXTS.pt.askTime],
    ['me lembra amanhã de ligar para a Ana', OFFLINE_TEXTS.pt.askTime],
    ['me lembra às 25h de ligar', OFFLINE_TEXTS.pt.askTime],
  ])('asks when for %p, which says no time of day, rather than guess one', async (text, question) => {
    const response = await plan(text);
    expect(response).toEqual({ content: question, toolCalls: [] });
  });

  it.each([
    'remind me at 3pm',
    // A repeat a reminder cannot have would fire once.
    'remind me every 8 hours to take pills',
    'remind me every other day at 9 to water',
    'remind me every 2 days at 9 to water',
    'me lembra a cada 2 dias às 9h de regar',
    'me lembra de tomar remédio de 8 em 8 horas',
  ])('rejects %p', async (text) => {
    const response = await plan(text);
    expect(response.toolCalls).toEqual([]);
    expect(response.content).toBe(/^(?:me )?lembr/.test(text) ? OFFLINE_HELP_PT : OFFLINE_HELP);
  });
});
