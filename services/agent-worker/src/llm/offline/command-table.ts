import { getTool, parseToolArgs } from '@assistant/shared';
import { fold, type FoldedText } from './folded-text';
import { ENDS_IN_NUMERIC_DATE, goalDate } from './goal-date';
import { NO_TIME, parseReminder, type Clock } from './reminder-time';

type Values = Record<string, string | undefined>;
type Args = Record<string, string | undefined>;
export interface PlannedCall {
  tool: string;
  args: Args;
}
interface Command {
  tool: string;
  /** What begins the command ("create folder", "me lembra"): a chained command is cut only before one. */
  start: string;
  /** The rest of the command after its start, to the end of the text. */
  rest: string;
  build: (v: Values, clock: Clock) => Args | typeof NO_TIME | null;
}

// Patterns run on folded text (lower case, no accents), so "Hábito" and "habito" read the same.
// Each is anchored and has at most one lazy group per separator keyword, so a match takes time
// linear in the text (command-splitter.test.ts tries pathological inputs).
const ART = String.raw`(?:\s+(?:a|an|the|my|all|new|o|as|os|um|uma|novo|nova|meu|minha|meus|minhas|todos os|todas as))*`;
const CREATE = 'create|make|add|new|criar|crie|cria|adicionar|adicione|novo|nova';
const RENAME = 'rename|renomear|renomeie|renomeia';
const MOVE = 'move|mover|mova';
const DELETE = 'delete|remove|cancel|apagar|apague|apaga|excluir|exclua|exclui|deletar|remover|remova|cancelar|cancele|cancela';
const LIST = 'list|show|listar|liste|lista|mostrar|mostre|mostra|ver';
const FOLDER = 'folder|pasta';
const DOC = 'document|doc|documento';
const HABIT = 'habit|habito';
const REMINDER = 'reminder|lembrete';
const GOAL = 'goal|meta|objetivo';
const DAILY = 'daily|every day|diario|diaria|diariamente|todo dia|todos os dias';
const WEEKLY = 'weekly|every week|semanal|semanalmente|toda semana|todas as semanas';
const WEEKDAYS = 'every weekday|on weekdays|weekdays|nos dias uteis|em dias uteis|todo dia util|todos os dias uteis|de segunda a sexta';
const MONTHLY = 'monthly|every month|mensal|mensalmente|todo mes|todos os meses';
const FREQUENCY_WORDS: Record<string, 'daily' | 'weekly' | 'monthly'> = {
  daily: 'daily',
  diario: 'daily',
  diaria: 'daily',
  weekly: 'weekly',
  semanal: 'weekly',
  monthly: 'monthly',
  mensal: 'monthly',
};

// "create a folder called Work", "crie uma pasta chamada Trabalho": the name follows the word.
const CALLED = String.raw`(?:\s+(?:called|named|titled|chamad[ao]|com o nome(?: de)?))?`;
// "a habit of meditating", "a goal to run 10k", "um hábito de correr": what the habit or goal is.
const OF_WHAT = String.raw`(?:\s+(?:called|named|titled|chamad[ao]|com o nome(?: de)?|of|to|de))?`;

// "in Work", "inside the folder Work", "na pasta Trabalho", "dentro da pasta Trabalho".
const IN_FOLDER = String.raw`(?:(?:in|inside)(?: the)?(?: folder)?|em|na pasta|dentro de|dentro da pasta)`;

// "with content Hello", "with the content Hello", "containing Hello", "com (o) conteúdo Olá".
const WITH_CONTENT = String.raw`(?:with(?: the)? content|containing|com(?: o)? conteudo)`;

const verb = (verbs: string, nouns: string) => String.raw`(?:${verbs})${ART}\s+(?:${nouns})`;
const listing = (tool: string, nouns: string): Command => ({
  tool,
  // "list habits", "show me my habits", "what are my habits", "me mostra meus hábitos", "quais são as metas".
  start: String.raw`(?:(?:(?:me\s+)?(?:${LIST})(?:\s+me)?|what are|quais(?: sao)?)${ART}\s+|(?:my|meus|minhas)\s+)(?:${nouns})`,
  rest: '',
  build: () => ({}),
});
const rename = (tool: string, nouns: string, build: Command['build']): Command => ({
  tool,
  start: verb(RENAME, nouns),
  rest: String.raw`\s+(?<id>.+?)\s+(?:to|para|pra|->|→)\s+(?<to>.+)`,
  build,
});
/** `of`: the words that may come before the name ("the reminder to drink water"). */
const remove = (tool: string, nouns: string, key: string, of = ''): Command => ({
  tool,
  start: verb(DELETE, nouns),
  rest: String.raw`${of && String.raw`(?:\s+(?:${of}))?`}\s+(?<id>.+)`,
  build: (v) => ({ [key]: v.id }),
});

const COMMANDS: Command[] = [
  {
    tool: 'create_folder',
    start: verb(CREATE, FOLDER),
    rest: String.raw`${CALLED}\s+(?<name>.+?)(?:\s+${IN_FOLDER}\s+(?<parent>.+))?`,
    build: (v) => ({ name: v.name, parent_folder_id: v.parent }),
  },
  {
    tool: 'create_document',
    start: verb(CREATE, DOC),
    rest: String.raw`${CALLED}\s+(?!${WITH_CONTENT}\s)(?<title>.+?)(?:\s+${IN_FOLDER}\s+(?<folder>.+?))?(?:\s+${WITH_CONTENT}\s+(?<content>.+))?`,
    build: (v) => ({ title: v.title, folder_id: v.folder, content: v.content }),
  },
  rename('rename_folder', FOLDER, (v) => ({ folder_id: v.id, new_name: v.to })),
  rename('rename_document', DOC, (v) => ({ document_id: v.id, new_title: v.to })),
  {
    tool: 'move_document',
    start: verb(MOVE, DOC),
    // "to the folder Archive", "to the Archive folder", "para a pasta Arquivo".
    rest: String.raw`\s+(?<id>.+?)\s+(?:to|into|para|pra)(?:\s+(?:the|a))?(?:\s+(?:${FOLDER}))?\s+(?<folder>.+?)(?:\s+folder)?`,
    build: (v) => ({ document_id: v.id, folder_id: v.folder }),
  },
  remove('delete_folder', FOLDER, 'folder_id'),
  remove('delete_document', DOC, 'document_id'),
  {
    tool: 'get_folder_contents',
    // "show me the folder Work", "what's in my folder Work", "what is in the Work folder", "me mostra a pasta Trabalho".
    start: String.raw`(?:(?:me\s+)?${verb(String.raw`(?:${LIST}|open|abrir|abra)(?:\s+me)?`, FOLDER)}|what(?:'s|’s| is) in(?: the| my)?(?=\s+(?:folder\s|(?:\S+\s+){1,4}folder(?:$|[\s?!.])))|o que (?:tem|ha) na pasta)`,
    rest: String.raw`(?:\s+folder)?\s+(?<id>.+?)(?:\s+folder)?`,
    build: (v) => ({ folder_id: v.id }),
  },
  {
    tool: 'search_documents',
    start: '(?:search|find|buscar|busque|busca|procurar|procure|procura|pesquisar|pesquise)',
    rest: String.raw`(?:\s+(?:documents?|docs?|documentos?|for|por|about|sobre))*\s+(?<query>.+)`,
    build: (v) => ({ query: v.query }),
  },
  {
    tool: 'save_habit',
    // How often may also come before the noun in English ("add a daily habit", "daily habit read")
    // and right after it in Portuguese ("criar hábito diário meditar").
    start: String.raw`(?:(?:(?:${CREATE})${ART}\s+)?(?<often>daily|weekly|monthly)\s+(?:${HABIT})|${verb(CREATE, HABIT)})`,
    rest:
      String.raw`(?:\s+(?<adjective>diario|diaria|semanal|mensal))?${OF_WHAT}\s+(?<name>.+?)` +
      String.raw`(?:,?\s+(?:(?<daily>${DAILY})|(?<weekly>${WEEKLY})|(?<weekdays>${WEEKDAYS})|(?<monthly>${MONTHLY})))?`,
    build: (v) => ({
      name: v.name,
      frequency:
        (['daily', 'weekly', 'weekdays', 'monthly'] as const).find((often) => v[often]) ??
        FREQUENCY_WORDS[fold(v.often ?? v.adjective ?? '')],
    }),
  },
  rename('update_habit', HABIT, (v) => ({ habit_id: v.id, name: v.to })),
  remove('delete_habit', HABIT, 'habit_id'),
  listing('list_habits', 'habits|habitos'),
  {
    tool: 'create_reminder',
    // "lembre que …" and "lembre-se de que …" are the remember command, not a reminder.
    start:
      String.raw`(?:(?<en>remind me|(?:(?:${CREATE}|set)${ART}\s+)?reminder)` +
      String.raw`|(?<pt>(?:me\s+lembr(?:ar|[ae])|lembr[ae](?:-me)?|lembrar-me|me\s+avis(?:ar|[ae]))(?!-se|\s+(?:de\s+)?que(?![a-z]))|(?:(?:${CREATE})${ART}\s+)?lembrete))`,
    rest: String.raw`\s+(?<when>.+)`,
    build: (v, clock) => {
      const reminder = parseReminder(v.when ?? '', v.en ? 'en' : 'pt', clock);
      return reminder === NO_TIME ? reminder : reminder && { text: reminder.text, at: reminder.at, repeat: reminder.repeat };
    },
  },
  listing('list_reminders', 'reminders|lembretes'),
  remove('delete_reminder', REMINDER, 'reminder_id', 'to|about|of|for|de|do|da|para|pra|sobre'),
  {
    tool: 'create_goal',
    start: verb(CREATE, GOAL),
    // The last "by" / "até": "Stand by me by 2026-12-31". Words that are no date stay in the title.
    rest: String.raw`${OF_WHAT}\s+(?!(?:by|until|ate)\s)(?<title>.+)\s+(?:by|until|ate)\s+(?<when>.+)`,
    build: (v, clock) => {
      const date = goalDate(v.when ?? '', clock);
      return date ? { title: v.title, target_date: date } : null;
    },
  },
  {
    tool: 'create_goal',
    start: verb(CREATE, GOAL),
    rest: String.raw`${OF_WHAT}\s+(?<title>.+)`,
    // "create goal Run by 2026-13-45" is a date the tool would refuse, not a title.
    build: (v) => (ENDS_IN_NUMERIC_DATE.test(` ${v.title ?? ''}`) ? null : { title: v.title }),
  },
  listing('list_goals', 'goals|metas|objetivos'),
  remove('delete_goal', GOAL, 'goal_id'),
  {
    tool: 'remember',
    start: String.raw`(?:remember(?:\s+that)?|note that|lembr[ae](?:-se)?(?:\s+de)?\s+que|anot[ae](?:\s+que)?)`,
    rest: String.raw`\s+(?<content>.+)`,
    build: (v) => ({ content: v.content }),
  },
];

// A colon may follow a command's first words: "remember: I prefer tea", "lembrete: ligar às 15h".
const PATTERNS = COMMANDS.map((command) => ({ command, pattern: new RegExp(`^${command.start}:?${command.rest}$`, 'd') }));
const STARTS = new RegExp(`(?:${COMMANDS.map((command) => command.start).join('|')})(?=[\\s:]|$)`, 'y');

/** Whether a command begins at `index` of the folded text. */
export function startsCommand(key: string, index: number): boolean {
  STARTS.lastIndex = index;
  return STARTS.test(key);
}

// Words that only join a command's parts or say how often: a value of nothing else ("remember
// that", "search for", "create habit daily") is a value left out, not a name. A quoted value is
// masked in the key, so 'create folder "daily"' keeps its name.
const JOINING_WORDS = new Set(
  (
    'that que for por about sobre to para pra by until ate in into inside em na no with com content conteudo ' +
    'daily weekly weekdays weekday monthly every each day week month diario diaria diariamente semanal semanalmente mensal ' +
    'mensalmente dia semana mes dias uteis util'
  ).split(' '),
);
// Named groups that mark which words were said ("daily", "remind me") rather than hold a value.
const MARKERS = new Set(['daily', 'weekly', 'weekdays', 'monthly', 'often', 'adjective', 'en', 'pt']);
const onlyJoiningWords = (key: string) =>
  key
    .trim()
    .split(/\s+/)
    .every((word) => JOINING_WORDS.has(word));

function cleanValue(raw: string): string | undefined {
  const value = raw
    .trim()
    .replace(/^["'“”‘’«](.*)["'“”‘’»]$/s, '$1')
    .trim();
  return value === '' ? undefined : value;
}

/** The tool call one command asks for, NO_TIME for a reminder said without a time, or null when the text is no command. */
export function parseCommand(text: FoldedText, clock: Clock): PlannedCall | typeof NO_TIME | null {
  for (const { command, pattern } of PATTERNS) {
    const match = pattern.exec(text.key);
    if (!match) continue;
    const values: Values = {};
    for (const [name, span] of Object.entries(match.indices?.groups ?? {})) {
      values[name] = span && cleanValue(text.raw.slice(span[0], span[1]));
      if (span && values[name] === undefined) return null; // an empty quoted value: "create folder ''"
      if (span && !MARKERS.has(name) && onlyJoiningWords(text.key.slice(span[0], span[1]))) return null;
    }
    const args = command.build(values, clock);
    if (args === NO_TIME) return args;
    if (args && fitsTool(command.tool, args)) return { tool: command.tool, args };
  }
  return null;
}

/** Whether the tool's own schema takes the arguments: a call it would refuse ("create goal Run by 2026-13-45") is no command. */
function fitsTool(tool: string, args: Args): boolean {
  const spec = getTool(tool);
  return spec !== undefined && parseToolArgs(spec, args).success;
}
