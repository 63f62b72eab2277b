import { fold } from './folded-text';
import type { Language } from './reminder-time';

/** What the offline planner says when it has no tool call to make, in the user's language. */
export const OFFLINE_HELP = `This is the built-in offline planner, not a language model: it only understands the commands below, in English or Portuguese. Set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server) to connect a real model.

Commands (chain up to 10 with ";", a new line, a comma, "and" or "e"):
- create folder Work in Projects | criar pasta Trabalho em Projetos
- create document Notes in Work with content Hello | criar documento Notas em Trabalho com conteúdo Olá
- rename folder Work to Office | renomear pasta Trabalho para Escritório
- rename document Notes to Minutes | renomear documento Notas para Ata
- move document Notes to Archive | mover documento Notas para Arquivo
- delete folder Old / delete document Draft | apagar pasta Antiga / excluir documento Rascunho
- list folder Work | o que tem na pasta Trabalho
- search for budget | procurar orçamento
- create habit meditation daily | criar hábito meditação diária
- rename habit yoga to stretching | renomear hábito yoga para alongamento
- delete habit yoga | apagar hábito yoga
- list habits | meus hábitos
- remind me tomorrow at 9 to call Ana | me lembra de ligar para Ana às 15h todo dia
- remind me every Monday at 8 to water the plants | me lembra daqui a 20 minutos de alongar
- list reminders / delete reminder reminder_1 | meus lembretes / apagar lembrete reminder_1
- create goal Run 10k by 2030-12-31 | criar meta Correr 10k até 2030-12-31
- list goals / delete goal goal_1 | minhas metas / apagar meta goal_1
- remember that I prefer tea | lembre que eu prefiro chá`;

export const OFFLINE_HELP_PT = `Este é o planejador offline embutido, não um modelo de linguagem: ele só entende os comandos abaixo, em português ou inglês. Defina OPENAI_API_KEY (ou OPENAI_BASE_URL para um servidor compatível) para conectar um modelo de verdade.

Comandos (encadeie até 10 com ";", uma nova linha, uma vírgula ou "e"):
- criar pasta Trabalho em Projetos
- criar documento Notas em Trabalho com conteúdo Olá
- renomear pasta Trabalho para Escritório
- renomear documento Notas para Ata
- mover documento Notas para Arquivo
- apagar pasta Antiga / excluir documento Rascunho
- o que tem na pasta Trabalho
- procurar orçamento
- criar hábito meditação diária
- renomear hábito yoga para alongamento
- apagar hábito yoga
- meus hábitos
- me lembra amanhã às 9 de ligar para a Ana
- me lembra de ligar para Ana às 15h todo dia / me lembra daqui a 20 minutos de alongar
- meus lembretes / apagar lembrete reminder_1
- criar meta Correr 10k até 31/12/2030
- minhas metas / apagar meta goal_1
- lembre que eu prefiro chá`;

/** The planner's own sentences, in each language it reads. */
export const OFFLINE_TEXTS: Record<
  Language,
  {
    help: string;
    capped: (max: number, total: number) => string;
    leftOut: (count: number, of: number) => string;
    missing: (tools: string) => string;
    askTime: string;
  }
> = {
  en: {
    help: OFFLINE_HELP,
    capped: (max, total) =>
      `Only the first ${max} of your ${total} commands were planned (at most ${max} at a time); send the others again.`,
    leftOut: (count, of) => `Left out, not understood: ${count} of your ${of} messages.`,
    missing: (tools) => `That needs ${tools}, which is not available right now.`,
    askTime:
      'When should I remind you? Say the time too, for example "remind me at 15:00 to call Ana" or "remind me tomorrow at 9 to call Ana".',
  },
  pt: {
    help: OFFLINE_HELP_PT,
    capped: (max, total) =>
      `Só os primeiros ${max} dos seus ${total} comandos foram planejados (no máximo ${max} de cada vez); envie os outros de novo.`,
    leftOut: (count, of) => `Deixadas de fora, não entendidas: ${count} das suas ${of} mensagens.`,
    missing: (tools) => `Isso precisa de ${tools}, que não está disponível agora.`,
    askTime:
      'Quando devo lembrar você? Diga também o horário, por exemplo "me lembra às 15h de ligar para a Ana" ou "me lembra amanhã às 9 de ligar para a Ana".',
  },
};

// Common words of one language and not the other (folded: no accents), and the planner's own keywords.
const PORTUGUESE = new Set(
  (
    'oi ola obrigado obrigada valeu voce voces nao sim tudo bem bom boa dia tarde noite que de da dos das para pra por favor ' +
    'como um uma eu tem qual quais isso isto esta estou meu minha meus minhas com sem amanha hoje agora e o os ao na nos nas em ' +
    'ajuda ajude fazer faz pode poderia quero queria preciso criar crie cria pasta documento habito habitos lembrete lembretes lembra ' +
    'lembre lembrar meta metas apagar apague excluir renomear mover listar mostrar procurar buscar anote'
  ).split(' '),
);
const ENGLISH = new Set(
  (
    'hi hello hey thanks thank you please the an and is are what how can could would to of in on for my i it this that with ' +
    'does help want need create make folder document habit habits reminder reminders remind goal goals list show delete remove ' +
    'rename move search find remember today tomorrow now at'
  ).split(' '),
);

/**
 * The language of the user's messages: Portuguese when they hold more Portuguese words (or words
 * with Portuguese accents) than English ones, else English. One pass over the words.
 */
export function languageOf(messages: string[]): Language {
  let score = 0;
  for (const message of messages) {
    for (const [word] of message.matchAll(/\p{L}+/gu)) {
      const folded = fold(word);
      if (PORTUGUESE.has(folded) || /[ãõçâêôáéíóúà]/iu.test(word)) score += 1;
      else if (ENGLISH.has(folded)) score -= 1;
    }
  }
  return score > 0 ? 'pt' : 'en';
}
