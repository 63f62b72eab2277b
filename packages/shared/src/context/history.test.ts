import { buildHistory, estimateTokens, summarizeMessages, type HistoryWindow, type StoredMessage } from './history';

const say = (role: 'user' | 'assistant', content: string): StoredMessage => ({ role, content, tool_calls: null, tool_call_id: null });

/** 200 messages (or twice `exchanges`): exchanges of about 200 characters each way. */
function longSession(exchanges = 100): StoredMessage[] {
  const messages: StoredMessage[] = [];
  for (let i = 1; i <= exchanges; i++) {
    messages.push(say('user', `Question ${i}: ${'tell me more about the garden plan '.repeat(5)}`));
    messages.push(say('assistant', `Answer ${i}: ${'the tomatoes go by the south wall '.repeat(5)}`));
  }
  messages[0] = say('user', 'My name is Ana and the very first thing: the zebra project starts in May.');
  return messages;
}

/** How many of `windows`, each a request of the turn after the one before, changed the summary; the others only add to the history. */
function summaryChanges(windows: HistoryWindow[]): number {
  let changes = 0;
  windows.slice(1).forEach((window, i) => {
    const before = windows[i] as HistoryWindow;
    if (window.summary !== before.summary) changes += 1;
    // Same summary: the earlier request's history is the start of this one's.
    else if (window.messages.length > before.messages.length)
      expect(window.messages.slice(0, before.messages.length)).toEqual(before.messages);
  });
  return changes;
}

const tokens = (messages: StoredMessage[]) => messages.reduce((sum, message) => sum + estimateTokens(message), 0);

describe('buildHistory', () => {
  it('keeps everything, without a summary, when it fits', () => {
    const messages = [say('user', 'hi'), say('assistant', 'hello')];
    expect(buildHistory(messages, 1_000)).toEqual({ messages, summary: null });
  });

  it('keeps a 200-message session within the budget, summary included, and still shows how it began', () => {
    const budget = 1_500;
    const window = buildHistory(longSession(), budget);
    expect(window.messages.length).toBeLessThan(200);
    expect(window.messages[0]?.role).toBe('user');
    expect(window.messages.at(-1)?.content).toMatch(/^Answer 100:/);
    const summary = window.summary as string;
    expect(tokens(window.messages) + Math.ceil(summary.length / 4)).toBeLessThanOrEqual(budget);
    expect(summary).toMatch(/^Summary of \d+ earlier messages of this conversation:/);
    expect(summary).toContain('User: My name is Ana and the very first thing: the zebra');
    expect(summary).toMatch(/lines in between omitted/);
  });

  it('keeps its summary and first messages for several turns as the session grows, so the prefix caches', () => {
    const session = longSession();
    const windows = [120, 140, 160, 180, 200].flatMap((from) =>
      Array.from({ length: 10 }, (_, turn) => buildHistory(session.slice(0, from + 2 * turn), 1_500)),
    );
    const changes = summaryChanges(windows);
    // One exchange is about 100 tokens: a window of 1,000 left half full slides every five turns or so.
    expect(changes).toBeGreaterThan(0);
    expect(changes).toBeLessThanOrEqual(windows.length / 3);
  });

  it('keeps them for several turns too in a session past the 500 messages a step reads', () => {
    const session = longSession(700);
    // Each request reads the newest 500 messages, so the first one read moves every turn.
    const windows = Array.from({ length: 200 }, (_, turn) =>
      buildHistory(session.slice(900 + 2 * turn - 500, 900 + 2 * turn), 3_000, { cutShort: true }),
    );
    const changes = summaryChanges(windows);
    expect(changes).toBeGreaterThan(0);
    expect(changes).toBeLessThanOrEqual(windows.length / 4);
  });

  it('always keeps the newest exchange, even over budget', () => {
    const window = buildHistory([say('user', 'old'), say('assistant', 'old answer'), say('user', 'x'.repeat(10_000))], 500);
    expect(window.messages).toEqual([say('user', 'x'.repeat(10_000))]);
    expect(window.summary).toContain('User: old');
  });

  it('never cuts between tool calls and their results, and fills in results that never came', () => {
    const call = { id: 'call_1', name: 'list_habits', arguments: '{}' };
    const messages: StoredMessage[] = [
      say('user', 'a'.repeat(4_000)),
      { role: 'assistant', content: '', tool_calls: [call], tool_call_id: null },
      say('user', 'list my habits'),
      { role: 'assistant', content: '', tool_calls: [{ ...call, id: 'call_2' }], tool_call_id: null },
      { role: 'tool', content: '{"success":true}', tool_calls: null, tool_call_id: 'call_2' },
      say('assistant', 'You have none.'),
    ];
    const window = buildHistory(messages, 600);
    expect(window.messages.map((m) => m.role)).toEqual(['user', 'assistant', 'tool', 'assistant']);
    const standIn = buildHistory(messages.slice(0, 2), 10_000).messages[2];
    expect(standIn).toMatchObject({ role: 'tool', tool_call_id: 'call_1' });
    // It may have run (a tool already started finishes after its turn ends): the model is not told it did not.
    expect(JSON.parse(String(standIn?.content))).toMatchObject({
      success: false,
      error: expect.stringMatching(/before it ran, or while it ran/),
    });
  });
});

describe('summarizeMessages', () => {
  it('moves a message stored between tool calls and their results after the results, and drops orphan results', () => {
    const messages: StoredMessage[] = [
      say('user', 'create folder Work'),
      { role: 'assistant', content: '', tool_calls: [{ id: 'call_9', name: 'create_folder', arguments: '{}' }], tool_call_id: null },
      say('assistant', 'Reminder: drink water'),
      { role: 'tool', content: '{"success":true}', tool_calls: null, tool_call_id: 'call_9' },
      { role: 'tool', content: '{"success":true}', tool_calls: null, tool_call_id: 'call_unknown' },
    ];
    const window = buildHistory(messages, 10_000);
    expect(window.messages.map((m) => [m.role, m.tool_call_id ?? m.content.slice(0, 8)])).toEqual([
      ['user', 'create f'],
      ['assistant', ''],
      ['tool', 'call_9'],
      ['assistant', 'Reminder'],
    ]);
  });

  it('shortens lines before dropping any', () => {
    const older = Array.from({ length: 20 }, (_, i) => say('user', `message ${i} ${'word '.repeat(50)}`));
    const summary = summarizeMessages(older, 2_000);
    expect(summary.length).toBeLessThanOrEqual(2_000);
    for (let i = 0; i < 20; i++) expect(summary).toContain(`User: message ${i} `);
    expect(summary).not.toMatch(/omitted/);
  });

  it('never cuts an emoji in half when it shortens a line', () => {
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    // Each line is cut at 157 characters plus "...": 150 x and three emojis, then half of the fourth.
    const older = Array.from({ length: 4 }, () => say('user', `${'x'.repeat(150)}${'🎉'.repeat(20)}`));
    const summary = summarizeMessages(older, 2_000);
    expect(summary).toContain(`User: ${'x'.repeat(150)}🎉🎉🎉...`);
    expect(summary).not.toMatch(lone);
  });

  it('keeps the opening and the latest lines within the limit when there are too many', () => {
    const older = Array.from({ length: 300 }, (_, i) => say(i % 2 === 0 ? 'user' : 'assistant', `line ${i} ${'x'.repeat(100)}`));
    const summary = summarizeMessages(older, 2_000);
    expect(summary.length).toBeLessThanOrEqual(2_000);
    expect(summary).toContain('User: line 0 ');
    expect(summary).toContain('Assistant: line 299 ');
    expect(summary).toMatch(/\[\.\.\. \d+ lines in between omitted \.\.\.\]/);
  });
});
