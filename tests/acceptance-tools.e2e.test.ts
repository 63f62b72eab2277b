import { Api, UUID, type StreamEvent } from '../scripts/lib/api';
import { FakeModel, userText, type ChatRequestBody, type FakeToolCall } from '../scripts/lib/fake-model';
import { DateTime } from 'luxon';
import { TestSystem } from '../scripts/lib/system';
import { waitFor } from '../scripts/lib/wait-for';

/**
 * Acceptance of CONTRACT §7 (tools and IDs) through the real processes: every built-in tool
 * called by a model with refs, names in other case and accents, ambiguous and unknown values and
 * UUIDs; each result's exact shape; and no UUID anywhere a model or a client sees one.
 */
const model = new FakeModel();
const system = new TestSystem();
let api: Api;

type Result = Record<string, unknown>;

/** A turn's program: the tool calls of each model step, by the turn's user message; then "Done.". */
const programs = new Map<string, FakeToolCall[][]>();
/** The results the model was given for each step of a program, in its calls' order. */
const stepResults = new Map<string, Result[][]>();

/** The tool results after the request's last assistant message: the answers to the step before. */
function lastStepResults(body: ChatRequestBody): Result[] {
  const messages = body.messages;
  const start = messages.map((m) => m.role).lastIndexOf('assistant');
  return messages.slice(start + 1).map((m) => JSON.parse(String(m.content)) as Result);
}

/** How many tool-calling steps the turn has taken so far. */
function stepsTaken(body: ChatRequestBody): number {
  const start = body.messages.map((m) => m.role).lastIndexOf('user');
  return body.messages.slice(start).filter((m) => m.role === 'assistant' && m.tool_calls?.length).length;
}

beforeAll(async () => {
  await model.start();
  model.script = (body) => {
    const text = userText(body);
    const program = programs.get(text);
    if (!program) return { content: 'ok' };
    const step = stepsTaken(body);
    if (step > 0) (stepResults.get(text) as Result[][]).push(lastStepResults(body));
    const calls = program[step];
    return calls ? { toolCalls: calls } : { content: 'Done.' };
  };
  await system.start({ env: { OPENAI_BASE_URL: model.url } });
  api = new Api(system.url);
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await model.stop();
});

const allEvents: StreamEvent[] = [];

/** Runs a program as one turn; answers the results of each step and the turn's events. */
async function run(user: Api, text: string, steps: FakeToolCall[][], sessionKey?: string) {
  programs.set(text, steps);
  stepResults.set(text, []);
  const { events } = await user.converse(text, sessionKey);
  allEvents.push(...events);
  expect(events.at(-1)?.data.status).toBe('completed');
  return { events, results: stepResults.get(text) as Result[][] };
}

/** The result of the `i`th call of a program's `step`. */
const resultOf = (results: Result[][], step: number, i = 0) => results[step]?.[i];

const call = (name: string, args: Record<string, unknown>): FakeToolCall => ({ name, arguments: args });

async function autonomousUser() {
  return api.createUser(system.adminToken, { preferences: { autonomous_mode: true, max_iterations: 50 } });
}

const FOREIGN_UUID = '0b6f8d1e-2f55-4b8e-9a51-3c1e5d0a7f42';

/** A success as CONTRACT §7 shapes it: the entity's ref under its `*_id` name, shown in the message, and a next step. */
function expectDone(result: Result | undefined, idKey: string, ref: string, fields: Result = {}): void {
  expect(result).toMatchObject({ success: true, [idKey]: ref, message: expect.stringContaining(`[ID: ${ref}]`), ...fields });
  expect(result?.next_step).toEqual(expect.any(String));
}

/** A failure as CONTRACT §7 shapes it: an error saying `error`, and a hint. */
function expectRefused(result: Result | undefined, error: string | RegExp): void {
  expect(result).toMatchObject({
    success: false,
    error: typeof error === 'string' ? expect.stringContaining(error) : expect.stringMatching(error),
  });
  expect(result?.hint).toEqual(expect.any(String));
}

describe('every built-in tool through the model', () => {
  it('runs the folder and document tools by ref, marked ref and accent-free name; refuses ambiguous, unknown, mistyped and UUID values', async () => {
    const user = await autonomousUser();
    const { results: r } = await run(user, 'folders and documents', [
      [call('create_folder', { name: 'Ação' }), call('create_folder', { name: 'Pessoal' })],
      [
        call('create_folder', { name: 'Notas', parent_folder_id: 'ACAO' }),
        call('create_folder', { name: 'Notas', parent_folder_id: 'folder_2' }),
      ],
      [
        call('create_document', { title: 'Plano de Férias', folder_id: 'notas' }),
        call('create_document', { title: 'Plano de Férias', folder_id: 'folder_3', content: 'praia em janeiro' }),
        call('create_document', { title: 'X', folder_id: 'Inexistente' }),
        call('create_document', { title: 'Y', folder_id: FOREIGN_UUID }),
      ],
      [
        call('rename_document', { document_id: 'plano de ferias', new_title: 'Plano 2027' }),
        call('rename_folder', { folder_id: '[ID: folder_1]', new_name: 'Ação e Trabalho' }),
      ],
      [call('move_document', { document_id: 'document_1', folder_id: 'folder_4' })],
      [call('get_folder_contents', { folder_id: 'ACAO E TRABALHO' }), call('search_documents', { query: 'praia' })],
      [call('delete_document', { document_id: 'Plano 2027' }), call('delete_folder', { folder_id: 'pessoal' })],
      [
        call('rename_folder', { folder_id: 'folder_2', new_name: 'x' }),
        call('rename_document', { document_id: 'document_1', new_title: '  ' }),
        call('rename_folder', { folder_id: 'habit_1', new_name: 'x' }),
        call('move_document', { document_id: FOREIGN_UUID, folder_id: 'folder_1' }),
      ],
    ]);
    expectDone(resultOf(r, 0), 'folder_id', 'folder_1', { name: 'Ação' });
    expectDone(resultOf(r, 1), 'folder_id', 'folder_3', { parent_folder_id: 'folder_1' });
    expectDone(resultOf(r, 1, 1), 'folder_id', 'folder_4', { parent_folder_id: 'folder_2' });
    expectRefused(
      resultOf(r, 2),
      '"notas" matches 2 folders. Candidates: "Notas" in "Ação" [ID: folder_3], "Notas" in "Pessoal" [ID: folder_4].',
    );
    expectDone(resultOf(r, 2, 1), 'document_id', 'document_1', { folder_id: 'folder_3' });
    expectRefused(resultOf(r, 2, 2), /^No folder named "Inexistente" was found\. Candidates: .*\[ID: folder_1\]/);
    expectRefused(resultOf(r, 2, 3), 'UUIDs are not accepted');
    expectDone(resultOf(r, 3), 'document_id', 'document_1', { title: 'Plano 2027' });
    expectDone(resultOf(r, 3, 1), 'folder_id', 'folder_1', { name: 'Ação e Trabalho' });
    expectDone(resultOf(r, 4), 'document_id', 'document_1', { folder_id: 'folder_4' });
    expectDone(resultOf(r, 5), 'folder_id', 'folder_1', { subfolders: [{ folder_id: 'folder_3', name: 'Notas' }] });
    expect(resultOf(r, 5, 1)).toMatchObject({ success: true, documents: [expect.objectContaining({ document_id: 'document_1' })] });
    expect(resultOf(r, 5, 1)?.message).toContain('"Plano 2027" [ID: document_1]');
    expectDone(resultOf(r, 6), 'document_id', 'document_1');
    expectDone(resultOf(r, 6, 1), 'folder_id', 'folder_2', { deleted_subfolders: 1 });
    expectRefused(resultOf(r, 7), /^No folder with ref folder_2 exists \(it may have been deleted\)\. Candidates: /);
    expectRefused(resultOf(r, 7, 1), 'new_title: must not be blank');
    expectRefused(resultOf(r, 7, 2), 'habit_1 is a habit, not a folder.');
    expectRefused(resultOf(r, 7, 3), 'UUIDs are not accepted');
  });

  it('runs the habit, reminder, goal and memory tools, times in the user zone with its name', async () => {
    const user = await autonomousUser();
    expect((await user.patch('/v1/preferences', { timezone: 'America/Sao_Paulo' })).status).toBe(200);
    const { results: r } = await run(user, 'habits and the rest', [
      [call('save_habit', { name: 'Meditação', frequency: 'daily' }), call('save_habit', { name: 'Corrida' })],
      [
        call('update_habit', { habit_id: 'MEDITACAO', description: 'dez minutos' }),
        call('create_reminder', { text: 'Meditar', at: '2026-12-23T09:00:00', habit_id: 'corrida', repeat: 'daily' }),
        call('create_reminder', { text: 'Água', at: '2026-12-23T09:00:00Z', repeat: 'weekdays' }),
        call('create_reminder', { text: 'Água', at: '2026-12-24T10:00:00-03:00', repeat: 'weekly' }),
        call('create_reminder', { text: 'Conta', at: '2026-12-25T08:30', repeat: 'monthly' }),
        call('create_goal', { title: 'Maratona', target_date: '2027-06-01', habit_id: 'habit_2' }),
      ],
      [
        call('list_reminders', {}),
        call('update_reminder', { reminder_id: 'água', repeat: null }),
        call('update_goal', { goal_id: 'maratona', title: 'Meia maratona' }),
      ],
      [
        call('delete_reminder', { reminder_id: 'reminder_1' }),
        call('delete_goal', { goal_id: 'Meia Maratona' }),
        call('delete_habit', { habit_id: 'corrida' }),
        call('remember', { content: 'Gosta de café.' }),
      ],
    ]);
    expectDone(resultOf(r, 0), 'habit_id', 'habit_1');
    expectDone(resultOf(r, 1), 'habit_id', 'habit_1', { description: 'dez minutos' });
    const local = (at: string, repeat: string) => ({
      at_local: `${at} (America/Sao_Paulo)`,
      repeat,
      message: expect.stringContaining(`${at} (America/Sao_Paulo)`),
    });
    expectDone(resultOf(r, 1, 1), 'reminder_id', 'reminder_1', { habit_id: 'habit_2', ...local('2026-12-23 09:00', 'daily') });
    expectDone(resultOf(r, 1, 2), 'reminder_id', 'reminder_2', local('2026-12-23 06:00', 'weekdays'));
    expectDone(resultOf(r, 1, 3), 'reminder_id', 'reminder_3', local('2026-12-24 10:00', 'weekly'));
    expectDone(resultOf(r, 1, 4), 'reminder_id', 'reminder_4', local('2026-12-25 08:30', 'monthly'));
    expectDone(resultOf(r, 1, 5), 'goal_id', 'goal_1', { habit_id: 'habit_2', target_date: '2027-06-01' });
    expect(resultOf(r, 2)?.message).toContain('"Água" [ID: reminder_2] fires at 2026-12-23 06:00 (America/Sao_Paulo), repeating weekdays');
    expectRefused(
      resultOf(r, 2, 1),
      '"água" matches 2 reminders. Candidates: "Água" at 2026-12-23 06:00 (America/Sao_Paulo) [ID: reminder_2], "Água" at 2026-12-24 10:00 (America/Sao_Paulo) [ID: reminder_3].',
    );
    expectDone(resultOf(r, 2, 2), 'goal_id', 'goal_1', { title: 'Meia maratona' });
    expectDone(resultOf(r, 3), 'reminder_id', 'reminder_1');
    expectDone(resultOf(r, 3, 1), 'goal_id', 'goal_1');
    expectDone(resultOf(r, 3, 2), 'habit_id', 'habit_2');
    expect(resultOf(r, 3, 3)).toMatchObject({ success: true, next_step: expect.any(String) });
  });
});

describe('refs', () => {
  it('stay the same across turns and a restart of every process; another session and a reset start their own, never contradicting them', async () => {
    const user = await autonomousUser();
    let r = (await run(user, 'refs: create', [[call('save_habit', { name: 'Yoga' }), call('create_folder', { name: 'Casa' })]])).results;
    expectDone(resultOf(r, 0), 'habit_id', 'habit_1');
    await system.restart();
    r = (
      await run(user, 'refs: after restart', [
        [
          call('update_habit', { habit_id: 'habit_1', frequency: 'daily' }),
          call('create_folder', { name: 'Sala', parent_folder_id: 'folder_1' }),
        ],
      ])
    ).results;
    expectDone(resultOf(r, 0), 'habit_id', 'habit_1', { frequency: 'daily' });
    expectDone(resultOf(r, 0, 1), 'folder_id', 'folder_2', { parent_folder_id: 'folder_1' });

    // The phone's session never showed habit_1 nor folder_2: a ref is only what its own session showed.
    const phone = 'agent:main:api:direct:phone';
    r = (
      await run(
        user,
        'refs: elsewhere',
        [
          [call('update_habit', { habit_id: 'habit_1', frequency: 'weekly' })],
          [call('get_folder_contents', { folder_id: 'sala' }), call('update_habit', { habit_id: 'habit_1', frequency: 'weekly' })],
        ],
        phone,
      )
    ).results;
    expectRefused(resultOf(r, 0), 'habit_1 was not shown in this conversation');
    expect(resultOf(r, 0)?.error).not.toContain('No habit with ref habit_1 exists');
    expect(resultOf(r, 0)?.candidates).toEqual([{ ref: 'habit_1', name: 'Yoga' }]);
    expectDone(resultOf(r, 1), 'folder_id', 'folder_1', { name: 'Sala' });
    expectDone(resultOf(r, 1, 1), 'habit_id', 'habit_1', { frequency: 'weekly' });

    expect((await user.post('/v1/sessions/agent:main:main/reset')).status).toBe(202);
    r = (
      await run(user, 'refs: after reset', [
        [call('get_folder_contents', { folder_id: 'casa' })],
        [call('delete_goal', { goal_id: 'goal_1' })],
      ])
    ).results;
    expectDone(resultOf(r, 0), 'folder_id', 'folder_1', { subfolders: [{ folder_id: 'folder_2', name: 'Sala' }] });
    expectRefused(resultOf(r, 1), 'goal_1 was not shown in this conversation');
    expect(resultOf(r, 1)?.hint).toBe('There are no goals yet; create one first.');
  }, 60_000);
});

describe('the system message (CONTRACT §8)', () => {
  it('keeps every heading in order within 60,000 characters when every profile section is over its cap, saying what it cut', async () => {
    const user = await autonomousUser();
    const sections = ['soul', 'identity', 'agents', 'tools', 'user', 'memory'];
    for (const section of sections) {
      const content = `${section}-start ${'word '.repeat(5_000)}${section}-end`;
      expect((await user.request('PUT', `/v1/profile/${section}`, { content })).status).toBe(200);
    }
    await run(user, 'caps', []);
    const request = model.requests.find((r) => userText(r.body) === 'caps');
    const prompt = String(request?.body.messages[0]?.content);
    expect(prompt.length).toBeLessThanOrEqual(60_000);
    expect(prompt).toMatch(/^You are /);
    const headings = [...prompt.matchAll(/^## (.+)$/gm)].map((match) => match[1]);
    expect(headings).toEqual(['Personality', 'Identity', 'Instructions', 'Tools', 'User Profile', 'Long-term Memory']);
    expect(prompt.match(/\[truncated: \d+ (more|earlier) characters not shown\]/g)).toHaveLength(6);
    for (const section of sections.slice(0, 5)) expect(prompt).toContain(`${section}-start`);
    expect(prompt).toContain('memory-end');
    expect(prompt).toContain('create_folder');
  });
});

describe('the turn context (CONTRACT §8)', () => {
  it("shows relevant documents with the session's refs in a direct session, never in a group one", async () => {
    const user = await autonomousUser();
    expect((await user.patch('/v1/preferences', { use_rag_by_default: true })).status).toBe(200);
    await run(user, 'rag: create', [[call('create_document', { title: 'Receita de bolo', content: 'cenouras ovos farinha' })]]);
    await run(user, 'rag: bolo de cenouras', [], 'agent:main:api:group:team');
    await run(user, 'rag: bolo de cenouras?', [], 'agent:main:api:direct:phone');
    const request = (text: string) => model.requests.find((r) => userText(r.body) === text)?.raw ?? '';
    expect(request('rag: bolo de cenouras')).not.toMatch(/Relevant documents|Receita de bolo/);
    expect(request('rag: bolo de cenouras?')).toMatch(/## Relevant documents\\n- \\"Receita de bolo\\" \[ID: document_1\]/);
  });
});

describe("other users' rows", () => {
  it('are out of reach of search, folder contents, renames, moves and retrieval, by name, ref or marked ref', async () => {
    const owner = await autonomousUser();
    await run(owner, 'secret: create', [
      [call('create_folder', { name: 'Privado' })],
      [call('create_document', { title: 'Diário secreto', folder_id: 'folder_1', content: 'segredo guardado' })],
    ]);
    const intruder = await autonomousUser();
    expect((await intruder.patch('/v1/preferences', { use_rag_by_default: true })).status).toBe(200);
    const { results: r } = await run(intruder, 'secret: diário segredo guardado', [
      [
        call('search_documents', { query: 'segredo' }),
        call('get_folder_contents', { folder_id: 'privado' }),
        call('rename_document', { document_id: 'Diario Secreto', new_title: 'Meu' }),
        call('move_document', { document_id: '[ID: document_1]', folder_id: 'folder_1' }),
        call('delete_folder', { folder_id: 'folder_1' }),
      ],
    ]);
    expect(resultOf(r, 0)).toMatchObject({ success: true, documents: [] });
    for (const result of (r[0] ?? []).slice(1)) expectRefused(result, /not shown in this conversation|No (folder|document) named/);
    // Retrieval is on for the intruder, and the owner's document matches every word: none of it reaches their model.
    const requests = model.requests.filter((m) => userText(m.body) === 'secret: diário segredo guardado');
    expect(requests).toHaveLength(2);
    for (const request of requests) expect(request.raw).not.toMatch(/Relevant documents|Diário secreto|Privado/);
    const owned = await owner.get('/v1/export');
    expect(owned.body.documents).toEqual([expect.objectContaining({ title: 'Diário secreto' })]);
    expect(owned.body.folders).toEqual([expect.objectContaining({ name: 'Privado' })]);
  });
});

describe('a reminder set in another session', () => {
  it("fires at the user's local time, its text stored as an assistant message of the main session", async () => {
    const user = await autonomousUser();
    expect((await user.patch('/v1/preferences', { timezone: 'America/Sao_Paulo' })).status).toBe(200);
    const at = DateTime.now().setZone('America/Sao_Paulo').plus({ seconds: 2 });
    const { results: r } = await run(
      user,
      'remind me from the phone',
      [[call('create_reminder', { text: 'Alongar agora', at: at.toFormat("yyyy-MM-dd'T'HH:mm:ss") })]],
      'agent:main:api:direct:phone',
    );
    expectDone(resultOf(r, 0), 'reminder_id', 'reminder_1', { at_local: `${at.toFormat('yyyy-MM-dd HH:mm')} (America/Sao_Paulo)` });
    await waitFor(
      async () => {
        const messages = (await user.get('/v1/sessions/agent:main:main/messages')).body as { role: string; content: string }[];
        return messages.some((m) => m.role === 'assistant' && m.content === 'Alongar agora');
      },
      'the reminder in the main session',
      { timeoutMs: 15_000 },
    );
    const phone = (await user.get('/v1/sessions/agent:main:api:direct:phone/messages')).body as { content: string }[];
    expect(phone.map((m) => m.content)).not.toContain('Alongar agora');
  });
});

describe('manual mode', () => {
  it('asks approval for the tools that change data, shown with local times and no UUID; a read-only tool and a UUID refusal come at once', async () => {
    const user = await api.createUser(system.adminToken, { preferences: { timezone: 'America/Sao_Paulo' } });
    const text = 'manual: plan';
    programs.set(text, [
      [
        call('save_habit', { name: 'Yoga' }),
        call('list_habits', {}),
        call('update_habit', { habit_id: FOREIGN_UUID, name: 'x' }),
        call('create_reminder', { text: 'Ioga', at: '2026-12-23T09:00', repeat: 'daily' }),
      ],
    ]);
    stepResults.set(text, []);
    const { turn_id: turnId } = await user.send(text);
    // Both tasks that need no approval end while the turn waits: the read-only one and the refused one.
    const ended = new Set<string>();
    const asked = await user.events(turnId, {
      until: (event) => {
        if (event.event === 'task_update' && ['completed', 'failed'].includes(String(event.data.status)))
          ended.add(String(event.data.task_id));
        return ended.has('task_2') && ended.has('task_3');
      },
    });
    expect(asked.filter((event) => event.event === 'tool_approval_request').map((event) => event.data.task_id)).toEqual([
      'task_1',
      'task_4',
    ]);
    expect(asked.find((event) => event.event === 'tool_complete')?.data).toMatchObject({ task_id: 'task_2', tool_name: 'list_habits' });
    const pending = (await user.get('/v1/approvals?status=pending')).body as Result[];
    expect(pending.map((approval) => [approval.task_id, approval.tool_name, approval.description])).toEqual([
      ['task_1', 'save_habit', 'Save habit "Yoga"'],
      ['task_4', 'create_reminder', 'Create reminder "Ioga" at 2026-12-23 09:00 (America/Sao_Paulo), daily'],
    ]);
    expect(JSON.stringify(pending.map((approval) => approval.arguments))).not.toMatch(UUID);
    for (const approval of pending)
      expect((await user.post(`/v1/approvals/${String(approval.approval_id)}`, { decision: 'approve' })).status).toBe(200);
    const events = await user.events(turnId);
    allEvents.push(...events);
    expect(events.at(-1)?.data.status).toBe('completed');
    const [results] = stepResults.get(text) as Result[][];
    expectDone(results?.[0], 'habit_id', 'habit_1');
    expectRefused(results?.[2], 'UUIDs are not accepted');
    expectDone(results?.[3], 'reminder_id', 'reminder_1', { at_local: '2026-12-23 09:00 (America/Sao_Paulo)' });
  });
});

describe('the boundary', () => {
  it('showed no UUID to the model, nor in any event of the turns above, though some were sent as arguments', () => {
    expect(model.requests.length).toBeGreaterThan(15);
    for (const request of model.requests) expect(request.raw).not.toMatch(UUID);
    expect(allEvents.length).toBeGreaterThan(50);
    // The turn's and an approval's own ids are a client's handles; what the model chose or was told is not.
    for (const { data } of allEvents) expect(JSON.stringify({ ...data, turn_id: null, approval_id: null })).not.toMatch(UUID);
  });
});
