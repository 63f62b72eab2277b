import { sessionKind, type SessionKind } from '../session-keys';
import { modelTools, TOOL_SUMMARY_CAP, toolSummary } from '../tools';
import { DEFAULT_PROFILE, type Profile } from './profile-defaults';
import { buildSystemPrompt, PROMPT_CAP, SECTION_CAP, type PromptInput } from './system-prompt';

const FULL_PROFILE: Profile = {
  soul: 'SOUL text',
  identity: 'IDENTITY text',
  agents: 'AGENTS text',
  tools: 'TOOLS text',
  user: 'USER text',
  memory: 'MEMORY text',
};

function input(kind: SessionKind, overrides: Partial<PromptInput> = {}): PromptInput {
  return {
    assistant: { name: 'Nexo' },
    profile: FULL_PROFILE,
    sessionKind: kind,
    toolSummary: toolSummary(),
    ...overrides,
  };
}

function headings(prompt: string): string[] {
  return [...prompt.matchAll(/^## (.+)$/gm)].map((match) => match[1] as string);
}

/** The body of one `## heading` section. */
function section(prompt: string, heading: string): string | undefined {
  const match = new RegExp(`^## ${heading}\\n([\\s\\S]*?)(?=\\n\\n## |$(?![\\s\\S]))`, 'm').exec(prompt);
  return match?.[1];
}

describe('buildSystemPrompt: which sections each kind of session gets (docs/memory.md#profile)', () => {
  const ALWAYS = ['Personality', 'Identity', 'Instructions', 'Tools'];
  // Known pitfalls and Relevant documents change with each message: they are the turn's context now.
  const AFTER: string[] = [];

  it.each<[string, string, string[]]>([
    ['main', 'agent:main:main', [...ALWAYS, 'User Profile', 'Long-term Memory', ...AFTER]],
    ['secondary direct', 'agent:main:telegram:direct:42', [...ALWAYS, 'User Profile', ...AFTER]],
    ['direct on the web', 'agent:main:web:direct:browser-1', [...ALWAYS, 'User Profile', ...AFTER]],
    ['group', 'agent:main:api:group:team', [...ALWAYS, ...AFTER]],
    ['group on whatsapp', 'agent:main:whatsapp:group:family', [...ALWAYS, ...AFTER]],
  ])('%s session (%s) has exactly these headings, in order', (_name, key, expected) => {
    const prompt = buildSystemPrompt(input(sessionKind(key)));
    expect(headings(prompt)).toEqual(expected);
    expect(prompt.startsWith('You are Nexo, a personal AI assistant.')).toBe(true);
  });

  it.each<[keyof Profile, string, Record<SessionKind, boolean>]>([
    ['soul', 'Personality', { main: true, direct: true, group: true }],
    ['identity', 'Identity', { main: true, direct: true, group: true }],
    ['agents', 'Instructions', { main: true, direct: true, group: true }],
    ['tools', 'Tools', { main: true, direct: true, group: true }],
    ['user', 'User Profile', { main: true, direct: true, group: false }],
    ['memory', 'Long-term Memory', { main: true, direct: false, group: false }],
  ])('the %s section (## %s) reaches the model only where docs/memory.md#profile allows', (key, heading, allowed) => {
    for (const kind of ['main', 'direct', 'group'] as const) {
      const prompt = buildSystemPrompt(input(kind));
      expect(prompt.includes(FULL_PROFILE[key])).toBe(allowed[kind]);
      expect(headings(prompt).includes(heading)).toBe(allowed[kind]);
    }
  });

  it.each<[SessionKind, string[]]>([
    ['main', [...ALWAYS, 'User Profile', 'Long-term Memory']],
    ['direct', [...ALWAYS, 'User Profile']],
    ['group', ALWAYS],
  ])('keeps the headings of empty sections in a %s session', (kind, expected) => {
    // A new user's USER and MEMORY are empty; so may any section be after PUT /v1/profile.
    const empty: Profile = { soul: '', identity: '', agents: '', tools: '', user: '', memory: ' \n' };
    expect(headings(buildSystemPrompt(input(kind, { profile: DEFAULT_PROFILE })))).toEqual(expected);
    const prompt = buildSystemPrompt(input(kind, { profile: empty, toolSummary: '' }));
    expect(prompt).toBe(['You are Nexo, a personal AI assistant.', ...expected.map((heading) => `## ${heading}`)].join('\n\n'));
  });

  it('shows the identity fields in the first line', () => {
    const prompt = buildSystemPrompt(
      input('group', { assistant: { name: 'Ada', emoji: '🦉', creature: 'owl', tone: 'calm', vibe: 'curious' } }),
    );
    expect(prompt.split('\n')[0]).toBe('You are Ada 🦉, a personal AI assistant (owl). Your tone: calm. Your vibe: curious.');
  });

  it('lists the tools from the registry after the TOOLS text', () => {
    const prompt = buildSystemPrompt(input('main'));
    expect(section(prompt, 'Tools')).toBe(`TOOLS text\n\n${toolSummary()}`);
    expect(section(prompt, 'Tools')).toContain('- rename_document: Rename an existing document');
  });

  it("writes its own text, the tools offered and a new user's profile in one-byte characters", () => {
    // V8 keeps a string with any character past U+00FF at two bytes a character: one "…" in the
    // tools or the prompt doubles every model request in memory (13 MiB more at the crowd's peak).
    const twoByte = /[\u0100-\uffff]/;
    expect(buildSystemPrompt(input('main', { profile: DEFAULT_PROFILE }))).not.toMatch(twoByte);
    expect(JSON.stringify(modelTools)).not.toMatch(twoByte);
  });

  it('never lets a UUID through', () => {
    const uuid = '0b6f1c1e-2f4a-4a57-9d3e-6b1f0a9c1d2e';
    const prompt = buildSystemPrompt(input('main', { profile: { ...FULL_PROFILE, memory: `the id is ${uuid}` } }));
    expect(prompt).not.toContain(uuid);
  });
});

describe('buildSystemPrompt: caps', () => {
  it('truncates a 30,000-character SOUL to 20,000 with a visible note', () => {
    const soul = 's'.repeat(30_000);
    const prompt = buildSystemPrompt(input('main', { profile: { ...FULL_PROFILE, soul } }));
    const body = section(prompt, 'Personality') as string;
    expect(body).toBe(`${'s'.repeat(SECTION_CAP)}\n\n[truncated: 10000 more characters not shown]`);
    expect(prompt).toContain('s'.repeat(20_000));
    expect(prompt).not.toContain('s'.repeat(20_001));
    // The sections after it are still there.
    expect(headings(prompt)).toContain('Long-term Memory');
  });

  it('caps the TOOLS text alone, so the registry summary follows it in full', () => {
    const tools = 't'.repeat(30_000);
    const body = section(buildSystemPrompt(input('main', { profile: { ...FULL_PROFILE, tools } })), 'Tools');
    expect(body).toBe(`${'t'.repeat(SECTION_CAP)}\n\n[truncated: 10000 more characters not shown]\n\n${toolSummary()}`);
  });

  it('keeps the newest part of a long MEMORY, where digests are appended', () => {
    const memory = `${'old '.repeat(6_000)}\n### Session digest 2026-02-16 14:05 UTC (agent:main:main)\nLikes tea.`;
    const body = section(buildSystemPrompt(input('main', { profile: { ...FULL_PROFILE, memory } })), 'Long-term Memory') as string;
    expect(body.startsWith(`[truncated: ${memory.length - SECTION_CAP} earlier characters not shown]`)).toBe(true);
    expect(body.endsWith('Likes tea.')).toBe(true);
  });

  it('caps the whole prompt at 60,000 characters by cutting the longest sections, each with its note, every heading kept', () => {
    const big = (letter: string) => letter.repeat(SECTION_CAP);
    const memory = `${big('f')}\nLikes tea.`;
    const profile: Profile = { soul: big('a'), identity: 'Short and whole.', agents: big('c'), tools: big('d'), user: big('e'), memory };
    const prompt = buildSystemPrompt(input('main', { profile }));
    expect(prompt.length).toBeLessThanOrEqual(PROMPT_CAP);
    expect(prompt.length).toBeGreaterThan(PROMPT_CAP - 1_000);
    expect(headings(prompt)).toEqual(['Personality', 'Identity', 'Instructions', 'Tools', 'User Profile', 'Long-term Memory']);
    expect(section(prompt, 'Identity')).toBe('Short and whole.');
    for (const heading of ['Personality', 'Instructions', 'User Profile']) {
      expect(section(prompt, heading)).toMatch(/\n\n\[truncated: \d+ more characters not shown\]$/);
    }
    expect(section(prompt, 'Tools')).toContain(toolSummary());
    expect(section(prompt, 'Long-term Memory')).toMatch(/^\[truncated: \d+ earlier characters not shown\][^]*Likes tea\.$/);
  });

  it('never cuts an emoji in half: a lone surrogate makes strict servers refuse the whole request', () => {
    const lone = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/;
    // The 20,000-character cut of SOUL and the cut keeping MEMORY's newest part both fall inside a pair.
    const soul = `a${'😀'.repeat(12_000)}`;
    const memory = `${'😀'.repeat(12_000)}b`;
    const prompt = buildSystemPrompt(input('main', { profile: { ...FULL_PROFILE, soul, memory } }));
    expect(prompt).not.toMatch(lone);
    expect(section(prompt, 'Personality')).toBe(`a${'😀'.repeat(9_999)}\n\n[truncated: 4002 more characters not shown]`);
    expect(section(prompt, 'Long-term Memory')).toBe(`[truncated: 4002 earlier characters not shown]\n\n${'😀'.repeat(9_999)}b`);
    // The whole-prompt cap too.
    const big = `x${'😀'.repeat(15_000)}`;
    const huge = buildSystemPrompt(
      input('main', { profile: { soul: big, identity: big, agents: big, tools: big, user: big, memory: big } }),
    );
    expect(huge.length).toBeLessThanOrEqual(PROMPT_CAP);
    expect(huge).not.toMatch(lone);
  });

  it('leaves a prompt under the caps untouched', () => {
    expect(buildSystemPrompt(input('main'))).not.toContain('[truncated');
  });
});

describe('buildSystemPrompt: cacheable', () => {
  it('holds no clock: the same input gives the same bytes, whenever it is built', () => {
    const prompt = buildSystemPrompt(input('main'));
    expect(buildSystemPrompt(input('main'))).toBe(prompt);
    expect(prompt).not.toMatch(/\d{4}-\d{2}-\d{2}|current (date|time)/i);
  });
});

describe('toolSummary', () => {
  it("lists each tool by its description's first line, and keeps a huge MCP catalogue from crowding the profile out", () => {
    const mcp = Array.from({ length: 120 }, (_, i) => ({
      name: `server__tool_${i}`,
      description: `\nTool ${i} does one thing. ${'It explains at length. '.repeat(40)}\nSecond line.`,
      parameters: { type: 'object' },
    }));
    const summary = toolSummary(mcp);
    expect(summary.startsWith(toolSummary())).toBe(true);
    expect(summary.length).toBeLessThanOrEqual(TOOL_SUMMARY_CAP + 100);
    expect(summary).not.toContain('Second line.');
    const lines = summary.split('\n');
    expect(lines.every((line) => line.length <= 64 + 4 + 300)).toBe(true);
    expect(lines.at(-1)).toMatch(/^- and \d+ more tools, described in their definitions$/);

    const prompt = buildSystemPrompt(input('main', { toolSummary: summary, profile: { ...FULL_PROFILE, memory: 'm'.repeat(15_000) } }));
    expect(section(prompt, 'Long-term Memory')).toBe('m'.repeat(15_000));
  });
});
