import type { ChatMessage, ChatModel, ChatRequest, ChatResponse, ToolCall } from './chat-model';

/**
 * Stands in for a chat model when none is configured, so a fresh install still works end to end.
 * It is not a language model: it maps the plain commands listed in OFFLINE_HELP to the same tool
 * calls a model would make, and summarises the tool results in text.
 */
export const OFFLINE_HELP = `This is the built-in offline planner, not a language model: it only understands the commands below, in English or Portuguese. Set OPENAI_API_KEY (or OPENAI_BASE_URL for a compatible server) to connect a real model.

Commands (chain several with ";", a new line or "and then"):
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
- remind me to call Ana tomorrow at 3pm | me lembra de ligar para Ana às 15h todo dia
- list reminders / delete reminder reminder_1 | meus lembretes / apagar lembrete reminder_1
- create goal Run 10k by 2030-12-31 | criar meta Correr 10k até 2030-12-31
- list goals / delete goal goal_1 | minhas metas / apagar meta goal_1
- remember that I prefer tea | lembre que eu prefiro chá`;

type Values = Record<string, string | undefined>;
type Args = Record<string, string | undefined>;
interface Planned {
  tool: string;
  args: Args;
}
interface Command {
  tool: string;
  pattern: RegExp;
  build: (v: Values, now: Date) => Args | null;
}

// Patterns run on folded text (lower case, no accents), so "Hábito" and "habito" read the same.
const ART = String.raw`(?:\s+(?:a|an|the|my|all|new|o|a|as|os|um|uma|novo|nova|meu|minha|meus|minhas|todos os|todas as))*`;
const CREATE = 'create|make|add|new|criar|crie|cria|adicionar|adicione|novo|nova';
const RENAME = 'rename|renomear|renomeie|renomeia';
const MOVE = 'move|mover|mova';
const DELETE = 'delete|remove|apagar|apague|apaga|excluir|exclua|exclui|deletar|remover|remova';
const LIST = 'list|show|listar|liste|lista|mostrar|mostre|mostra|ver';
const FOLDER = 'folder|pasta';
const DOC = 'document|doc|documento';
const HABIT = 'habit|habito';
const REMINDER = 'reminder|lembrete';
const GOAL = 'goal|meta|objetivo';

const verb = (verbs: string, nouns: string) => String.raw`(?:${verbs})${ART}\s+(?:${nouns})`;
const re = (source: string) => new RegExp(`^${source}$`, 'd');
const listing = (nouns: string) => re(String.raw`(?:(?:${LIST})${ART}\s+|(?:my|meus|minhas)\s+)(?:${nouns})`);
const rename = (nouns: string) => re(String.raw`${verb(RENAME, nouns)}\s+(?<id>.+?)\s+(?:to|para)\s+(?<to>.+)`);
const remove = (nouns: string) => re(String.raw`${verb(DELETE, nouns)}\s+(?<id>.+)`);

const TIME = String.raw`(?<hour>\d{1,2})(?:(?::|h)(?<minute>\d{2}))?\s*(?:(?<am>am)|(?<pm>pm)|h(?:oras|rs)?)?`;
const TOMORROW = 'tomorrow|amanha';
const DAILY = 'daily|every day|diario|diaria|diariamente|todo dia|todos os dias';
const WEEKLY = 'weekly|every week|semanal|semanalmente|toda semana|todas as semanas';

const COMMANDS: Command[] = [
  {
    tool: 'create_folder',
    pattern: re(String.raw`${verb(CREATE, FOLDER)}\s+(?<name>.+?)(?:\s+(?:(?:in|inside)(?: the)?(?: folder)?|em|na pasta|dentro de|dentro da pasta)\s+(?<parent>.+))?`),
    build: (v) => ({ name: v.name, parent_folder_id: v.parent }),
  },
  {
    tool: 'create_document',
    pattern: re(String.raw`${verb(CREATE, DOC)}\s+(?<title>.+?)(?:\s+(?:in(?: the)?(?: folder)?|em|na pasta)\s+(?<folder>.+?))?(?:\s+(?:with content|com conteudo)\s+(?<content>.+))?`),
    build: (v) => ({ title: v.title, folder_id: v.folder, content: v.content }),
  },
  { tool: 'rename_folder', pattern: rename(FOLDER), build: (v) => ({ folder_id: v.id, new_name: v.to }) },
  { tool: 'rename_document', pattern: rename(DOC), build: (v) => ({ document_id: v.id, new_title: v.to }) },
  {
    tool: 'move_document',
    pattern: re(String.raw`${verb(MOVE, DOC)}\s+(?<id>.+?)\s+(?:to|into|para|pra)(?:\s+(?:the|a))?(?:\s+(?:${FOLDER}))?\s+(?<folder>.+)`),
    build: (v) => ({ document_id: v.id, folder_id: v.folder }),
  },
  { tool: 'delete_folder', pattern: remove(FOLDER), build: (v) => ({ folder_id: v.id }) },
  { tool: 'delete_document', pattern: remove(DOC), build: (v) => ({ document_id: v.id }) },
  {
    tool: 'get_folder_contents',
    pattern: re(String.raw`(?:${verb(`${LIST}|open|abrir|abra`, FOLDER)}|what(?:'s|’s| is) in(?: the)? folder|o que (?:tem|ha) na pasta)\s+(?<id>.+)`),
    build: (v) => ({ folder_id: v.id }),
  },
  {
    tool: 'search_documents',
    pattern: re(String.raw`(?:search|find|buscar|busque|busca|procurar|procure|procura|pesquisar|pesquise)(?:\s+(?:documents?|docs?|documentos?|for|por))*\s+(?<query>.+)`),
    build: (v) => ({ query: v.query }),
  },
  {
    tool: 'save_habit',
    pattern: re(String.raw`${verb(CREATE, HABIT)}\s+(?<name>.+?)(?:\s+(?:(?<daily>${DAILY})|(?<weekly>${WEEKLY})))?`),
    build: (v) => ({ name: v.name, frequency: v.daily ? 'daily' : v.weekly ? 'weekly' : undefined }),
  },
  { tool: 'update_habit', pattern: rename(HABIT), build: (v) => ({ habit_id: v.id, name: v.to }) },
  { tool: 'delete_habit', pattern: remove(HABIT), build: (v) => ({ habit_id: v.id }) },
  { tool: 'list_habits', pattern: listing('habits|habitos'), build: () => ({}) },
  {
    tool: 'create_reminder',
    pattern: re(
      String.raw`(?:remind me(?:\s+to)?|(?:me\s+)?lembr[ae](?:-me)?\s+(?:de|para)|(?:(?:${CREATE}|set)${ART}\s+)?(?:${REMINDER})(?:\s+(?:to|de|para))?)` +
        String.raw`\s+(?<text>.+?)(?:\s+(?<dayBefore>${TOMORROW}))?\s+(?:at|as|a|@)\s+${TIME}(?:\s+(?<dayAfter>${TOMORROW}))?` +
        String.raw`(?:\s+(?:(?<daily>${DAILY})|(?<weekly>${WEEKLY})))?`,
    ),
    build: (v, now) => {
      const at = nextOccurrence(now, v, Boolean(v.dayBefore ?? v.dayAfter));
      return at ? { text: v.text, at, repeat: v.daily ? 'daily' : v.weekly ? 'weekly' : undefined } : null;
    },
  },
  { tool: 'list_reminders', pattern: listing('reminders|lembretes'), build: () => ({}) },
  { tool: 'delete_reminder', pattern: remove(REMINDER), build: (v) => ({ reminder_id: v.id }) },
  {
    tool: 'create_goal',
    pattern: re(String.raw`${verb(CREATE, GOAL)}\s+(?<title>.+?)(?:\s+(?:by|until|ate)\s+(?<date>\d{4}-\d{2}-\d{2}))?`),
    build: (v) => ({ title: v.title, target_date: v.date }),
  },
  { tool: 'list_goals', pattern: listing('goals|metas|objetivos'), build: () => ({}) },
  { tool: 'delete_goal', pattern: remove(GOAL), build: (v) => ({ goal_id: v.id }) },
  {
    tool: 'remember',
    pattern: re(String.raw`(?:remember(?:\s+that)?|note that|lembr[ae](?:-se)?(?:\s+de)?\s+que|anot[ae](?:\s+que)?)\s+(?<content>.+)`),
    build: (v) => ({ content: v.content }),
  },
];

/** Without am/pm the hour is read on a 24-hour clock; the result is the next such local time after now. */
function nextOccurrence(now: Date, v: Values, tomorrow: boolean): string | null {
  let hour = Number(v.hour);
  const minute = Number(v.minute ?? 0);
  if (v.am || v.pm) {
    if (hour < 1 || hour > 12) return null;
    hour = (hour % 12) + (v.pm ? 12 : 0);
  }
  if (hour > 23 || minute > 59) return null;
  const at = new Date(now);
  at.setHours(hour, minute, 0, 0);
  // setDate keeps the wall-clock time across a daylight-saving change, adding 24h would not.
  if (tomorrow) at.setDate(now.getDate() + 1);
  else if (at <= now) at.setDate(at.getDate() + 1);
  return at.toISOString();
}

/** The text for matching: same length as the original, so a match's indices slice the original. */
interface Text {
  raw: string;
  key: string;
}

function toText(raw: string): Text {
  let key = '';
  for (const ch of raw) {
    const folded = ch.normalize('NFD').replace(/\p{M}/gu, '').toLowerCase();
    key += folded.length === ch.length ? folded : ch;
  }
  // Masking quoted values keeps keywords and separators inside them from being read as commands.
  key = key.replace(/"[^"\n]*"|“[^”\n]*”/g, (q) => q.slice(0, 1) + '_'.repeat(q.length - 2) + q.slice(-1));
  return { raw, key };
}

const slice = (t: Text, start: number, end: number): Text => ({ raw: t.raw.slice(start, end), key: t.key.slice(start, end) });

function cleanValue(raw: string): string | undefined {
  const value = raw.trim().replace(/^["'“”‘’](.*)["'“”‘’]$/s, '$1').trim();
  return value === '' ? undefined : value;
}

function parseCommand(segment: Text, now: Date): Planned | null {
  const bounds = /^\s*(?:(?:please|por favor)\b[\s,]*)?(.*?)[\s,]*(?:\b(?:please|por favor))?[\s.!?]*$/ds.exec(segment.key);
  const inner = bounds?.indices?.[1];
  if (!inner) return null;
  const text = slice(segment, inner[0], inner[1]);
  for (const command of COMMANDS) {
    const match = command.pattern.exec(text.key);
    if (!match) continue;
    const values: Values = {};
    for (const [name, span] of Object.entries(match.indices?.groups ?? {})) {
      values[name] = span && cleanValue(text.raw.slice(span[0], span[1]));
      if (span && values[name] === undefined) return null; // an empty quoted value: "create folder ''"
    }
    const args = command.build(values, now);
    if (args) return { tool: command.tool, args };
  }
  return null;
}

/**
 * Splits on " and "/" e " (and their "then" forms) only where every piece is a command, so a name
 * such as "yoga e meditação" survives; among valid splits the one with most commands wins.
 */
function parseChain(chunk: Text, now: Date): Planned[] | null {
  const cuts = [...chunk.key.matchAll(/\s+(?:and then|and|e depois|e)\s+/g)].map((m) => [m.index, m.index + m[0].length] as const);
  const memo = new Map<number, Planned[] | null>();
  const solve = (from: number): Planned[] | null => {
    const known = memo.get(from);
    if (known !== undefined) return known;
    let best: Planned[] | null = null;
    for (const [end, next] of [...cuts.filter(([start]) => start > from), [chunk.key.length, -1] as const]) {
      const first = parseCommand(slice(chunk, from, end), now);
      const rest = first && (next === -1 ? [] : solve(next));
      if (first && rest && (!best || rest.length + 1 > best.length)) best = [first, ...rest];
    }
    memo.set(from, best);
    return best;
  };
  return solve(0);
}

function parseCommands(message: string, now: Date): Planned[] | null {
  const text = toText(message.replace(/^\s*@\S+/, ''));
  const planned: Planned[] = [];
  let from = 0;
  for (const separator of [...text.key.matchAll(/[;\n]/g), null]) {
    const end = separator ? separator.index : text.key.length;
    const chunk = slice(text, from, end);
    from = end + 1;
    if (chunk.key.trim() === '') continue;
    const commands = parseChain(chunk, now);
    if (!commands) return null;
    planned.push(...commands);
  }
  return planned.length > 0 ? planned : null;
}

function describeResult(content: string): string {
  try {
    const result: unknown = JSON.parse(content);
    if (typeof result === 'object' && result !== null && 'success' in result) {
      const { success, message, error, hint } = result as Record<string, unknown>;
      if (success === true && typeof message === 'string') return message;
      if (success === false) return `Could not do that: ${String(error)}${typeof hint === 'string' && hint ? ` ${hint}` : ''}`;
    }
  } catch {
    // Not JSON: the raw text is the best summary there is.
  }
  return content;
}

function summarise(messages: ChatMessage[]): string {
  const lastCall = messages.findLastIndex((m) => m.role === 'assistant' && (m.tool_calls?.length ?? 0) > 0);
  const results = messages.slice(lastCall + 1).filter((m) => m.role === 'tool');
  return results.map((m) => describeResult(m.content)).join('\n');
}

export class OfflinePlanner implements ChatModel {
  readonly name = 'offline';
  private readonly now: () => Date;

  constructor(options: { now?: () => Date } = {}) {
    this.now = options.now ?? (() => new Date());
  }

  async complete(request: ChatRequest): Promise<ChatResponse> {
    throwIfAborted(request.signal);
    const last = request.messages.at(-1);
    if (last?.role === 'tool') return this.answer(request, summarise(request.messages));
    if (last?.role !== 'user') return this.answer(request, OFFLINE_HELP);

    const planned = parseCommands(last.content, this.now());
    if (!planned) return this.answer(request, OFFLINE_HELP);
    const offered = new Set(request.tools.map((t) => t.name));
    const missing = [...new Set(planned.map((p) => p.tool).filter((tool) => !offered.has(tool)))];
    if (missing.length > 0) {
      return this.answer(request, `That needs ${missing.join(', ')}, which is not available right now.\n\n${OFFLINE_HELP}`);
    }
    // Ids stay unique across the conversation because every earlier assistant turn bumps k.
    const turn = request.messages.filter((m) => m.role === 'assistant').length + 1;
    const toolCalls: ToolCall[] = planned.map((p, i) => ({
      id: `offline_${turn}_${i + 1}`,
      name: p.tool,
      arguments: JSON.stringify(Object.fromEntries(Object.entries(p.args).filter(([, value]) => value !== undefined))),
    }));
    return { content: '', toolCalls };
  }

  private async answer(request: ChatRequest, content: string): Promise<ChatResponse> {
    for (const chunk of content.match(/\s*\S+\s*/g) ?? [content]) {
      throwIfAborted(request.signal);
      if (chunk) await request.onToken(chunk);
    }
    return { content, toolCalls: [] };
  }
}

function throwIfAborted(signal: AbortSignal | undefined): void {
  if (signal?.aborted) throw new Error('aborted');
}
