import { codePointLength, DEFAULT_PROFILE, MAX_PROFILE_SECTION_CHARS, SECTION_CAP, toolCatalog, type ToolResult } from '@assistant/shared';
import { memoryHandlers } from './memory.handlers';
import { insertTestUser, type TestUser } from '../../../../tests/helpers/db';
import { containsUuidAnywhere, ToolHarness } from '../../../../tests/helpers/tool-harness';

const harness = new ToolHarness(memoryHandlers);

async function run(...params: Parameters<typeof harness.run>): Promise<ToolResult> {
  const result = await harness.run(...params);
  expect(containsUuidAnywhere(result)).toBe(false);
  return result;
}

async function profile(user: TestUser) {
  const found = await harness.pool.query<{ soul_content: string | null; memory_content: string | null; user_content: string | null }>(
    'SELECT soul_content, memory_content, user_content FROM agent_memory_profiles WHERE user_id = $1',
    [user.userId],
  );
  return found.rows;
}

afterAll(async () => {
  await harness.close();
});

describe('remember', () => {
  it('appends one fact per line to MEMORY, creating the profile with its defaults when missing', async () => {
    const user = await insertTestUser(harness.pool);
    const first = await run('remember', { content: ' I prefer tea ' }, user);
    expect(first).toEqual({
      success: true,
      section: 'memory',
      characters: 14,
      message: 'Remembered: "I prefer tea".',
      next_step: 'It will be part of your long-term memory in later conversations of the main session.',
    });
    await run('remember', { content: 'Ana is my sister;\nshe lives in Porto' }, user);
    expect(await profile(user)).toEqual([
      { soul_content: DEFAULT_PROFILE.soul, user_content: '', memory_content: '- I prefer tea\n- Ana is my sister; she lives in Porto' },
    ]);
  });

  it("writes names, not the session's refs, which mean other entities in the next session", async () => {
    const user = await insertTestUser(harness.pool);
    const habit = await harness.pool.query<{ id: string }>(
      `INSERT INTO habits (id, user_id, name, name_key) VALUES (gen_random_uuid(), $1, 'Meditação', 'meditacao') RETURNING id`,
      [user.userId],
    );
    await harness.pool.query(`INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'habit', 1, $2)`, [
      user.sessionId,
      habit.rows[0]?.id,
    ]);
    const result = await run('remember', { content: 'Her favourite habit is habit_1 [ID: habit_1]' }, user);
    expect(result.message).toBe('Remembered: "Her favourite habit is Meditação".');
    await run('update_profile', { section: 'user', content: 'Ana does habit_1 daily.' }, user);
    expect(await profile(user)).toEqual([
      {
        soul_content: DEFAULT_PROFILE.soul,
        user_content: 'Ana does Meditação daily.',
        memory_content: '- Her favourite habit is Meditação',
      },
    ]);
  });

  it('keeps what MEMORY already holds, and only touches the calling user', async () => {
    const user = await insertTestUser(harness.pool);
    const other = await insertTestUser(harness.pool);
    await harness.pool.query(
      "INSERT INTO agent_memory_profiles (user_id, memory_content) VALUES ($1, '## 2026-01-01\nLikes jazz\n\n'), ($2, 'Theirs')",
      [user.userId, other.userId],
    );
    await run('remember', { content: 'Runs on Sundays' }, user);
    expect((await profile(user))[0]?.memory_content).toBe('## 2026-01-01\nLikes jazz\n- Runs on Sundays');
    expect((await profile(other))[0]?.memory_content).toBe('Theirs');
  });

  it('says when MEMORY has grown past what the model is shown', async () => {
    const user = await insertTestUser(harness.pool);
    await harness.pool.query('INSERT INTO agent_memory_profiles (user_id, memory_content) VALUES ($1, $2)', [
      user.userId,
      'x'.repeat(SECTION_CAP),
    ]);
    const result = await run('remember', { content: 'One more' }, user);
    expect(result.next_step).toContain('update_profile');
  });

  it('keeps MEMORY within what PUT /v1/profile/memory accepts, dropping its oldest lines', async () => {
    const user = await insertTestUser(harness.pool);
    // At the limit, counted as the PUT and PostgreSQL count: each 🌱 is one character (JavaScript's length says two).
    const facts = Array.from({ length: 3_000 }, (_, n) => `- Fact ${n} 🌱🌱🌱🌱🌱🌱🌱🌱🌱🌱🌱🌱🌱🌱🌱🌱`).join('\n');
    const oldest = `- The oldest fact\n${facts}`;
    const full = oldest + '.'.repeat(MAX_PROFILE_SECTION_CHARS - codePointLength(oldest));
    await harness.pool.query('INSERT INTO agent_memory_profiles (user_id, memory_content) VALUES ($1, $2)', [user.userId, full]);
    const result = await run('remember', { content: 'Moved to Porto' }, user);
    const memory = (await profile(user))[0]?.memory_content ?? '';
    expect(codePointLength(memory)).toBeLessThanOrEqual(MAX_PROFILE_SECTION_CHARS);
    expect(memory.endsWith('.\n- Moved to Porto')).toBe(true);
    expect(memory).toMatch(/^- Fact \d+ /);
    expect(memory).not.toContain('The oldest fact');
    expect(result).toMatchObject({ success: true, characters: memory.length });
  });

  it('refuses blank or oversized content', () => {
    expect(toolCatalog.remember.input.safeParse({ content: '  ' }).success).toBe(false);
    expect(toolCatalog.remember.input.safeParse({ content: 'x'.repeat(2_001) }).success).toBe(false);
  });
});

describe('update_profile', () => {
  it('replaces one section and leaves the others', async () => {
    const user = await insertTestUser(harness.pool);
    await run('remember', { content: 'Likes tea' }, user);
    const result = await run('update_profile', { section: 'soul', content: 'Cheerful and brief.' }, user);
    expect(result).toEqual({
      success: true,
      section: 'soul',
      characters: 19,
      message: 'Profile section "soul" replaced (19 characters).',
      next_step: 'The new text applies from your next step on.',
    });
    const emptied = await run('update_profile', { section: 'memory', content: '' }, user);
    expect(emptied).toMatchObject({ success: true, section: 'memory', characters: 0 });
    expect(await profile(user)).toEqual([{ soul_content: 'Cheerful and brief.', user_content: '', memory_content: '' }]);
  });

  it('keeps a section within what PUT /v1/profile accepts when its refs, named, make it longer', async () => {
    const user = await insertTestUser(harness.pool);
    const title = 'A very long document title '.repeat(9);
    const document = await harness.pool.query<{ id: string }>(
      `INSERT INTO documents (id, user_id, title, title_key) VALUES (gen_random_uuid(), $1, $2, $3) RETURNING id`,
      [user.userId, title, title.toLowerCase()],
    );
    await harness.pool.query(`INSERT INTO session_refs (session_id, entity, n, entity_id) VALUES ($1, 'document', 1, $2)`, [
      user.sessionId,
      document.rows[0]?.id,
    ]);
    const result = await run('update_profile', { section: 'user', content: 'See document_1. '.repeat(1_200) }, user);
    const [saved] = await profile(user);
    expect(saved?.user_content?.length).toBeLessThanOrEqual(MAX_PROFILE_SECTION_CHARS);
    expect(saved?.user_content?.startsWith(`See ${title}.`)).toBe(true);
    expect(result).toMatchObject({ success: true, characters: saved?.user_content?.length });
  });

  it('refuses an unknown section and content over the section cap', () => {
    expect(toolCatalog.update_profile.input.safeParse({ section: 'secrets', content: 'x' }).success).toBe(false);
    // A section named by its heading in the system prompt, or in capitals, is that section.
    const named = ['Personality', 'USER', ' user profile ', 'Long-term Memory'].map(
      (section) => toolCatalog.update_profile.input.safeParse({ section, content: 'x' }).data?.section,
    );
    expect(named).toEqual(['soul', 'user', 'user', 'memory']);
    expect(toolCatalog.update_profile.input.safeParse({ section: 'user', content: 'x'.repeat(SECTION_CAP + 1) }).success).toBe(false);
  });
});
