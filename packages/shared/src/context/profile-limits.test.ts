import { clipSection, dropOldestMemory, MAX_PROFILE_SECTION_CHARS } from './profile-limits';

const MAX = MAX_PROFILE_SECTION_CHARS;

/** `count` digests as session-digest.ts appends them: a dated heading, then the summary. */
function digests(count: number, summary: (n: number) => string): string {
  return Array.from(
    { length: count },
    (_, n) => `### Session digest 2026-01-${String((n % 28) + 1).padStart(2, '0')} 10:00 UTC (agent:main:main)\n${summary(n)}`,
  ).join('\n\n');
}

/** Whether every surrogate has its other half: a lone one is not Unicode, and PostgreSQL's JSON refuses it. */
const wellFormed = (text: string) => !/[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/.test(text);

describe('dropOldestMemory', () => {
  it('leaves MEMORY within the limit as it is', () => {
    const memory = 'x'.repeat(MAX);
    expect(dropOldestMemory(memory)).toBe(memory);
  });

  it('drops whole digests from the start, keeping the newest intact', () => {
    const memory = `${digests(120, (n) => `Digest ${n}. ${'Talked about the garden. '.repeat(40)}`)}\n\n### Session digest 2026-02-16 14:05 UTC (agent:main:main)\nNewest: planting basil.`;
    const kept = dropOldestMemory(memory);
    expect(kept.length).toBeLessThanOrEqual(MAX);
    expect(memory.endsWith(kept)).toBe(true);
    expect(kept.startsWith('### Session digest ')).toBe(true);
    expect(kept.endsWith('Newest: planting basil.')).toBe(true);
    // No more than one digest's worth beyond what had to go.
    expect(kept.length).toBeGreaterThan(MAX - 1_100);
  });

  it('drops whole paragraphs when there is no heading near the cut, and whole lines of a remembered list', () => {
    const paragraphs = Array.from({ length: 150 }, (_, n) => `Note ${n}: ${'lorem ipsum '.repeat(70)}`).join('\n\n');
    const keptParagraphs = dropOldestMemory(paragraphs);
    expect(keptParagraphs.length).toBeLessThanOrEqual(MAX);
    expect(paragraphs.endsWith(keptParagraphs)).toBe(true);
    expect(keptParagraphs).toMatch(/^Note \d+: lorem/);

    const facts = Array.from({ length: 5_000 }, (_, n) => `- Fact ${n} about the user`).join('\n');
    const keptFacts = dropOldestMemory(facts);
    expect(keptFacts.length).toBeLessThanOrEqual(MAX);
    expect(keptFacts).toMatch(/^- Fact \d+ about the user\n/);
    expect(keptFacts.endsWith('- Fact 4999 about the user')).toBe(true);
  });

  it('cuts text with no line break where it must, never through an emoji', () => {
    for (const memory of [`${'🌱'.repeat(MAX + 10)}!`, '🌱'.repeat(MAX + 10)]) {
      const kept = dropOldestMemory(memory);
      expect([...kept]).toHaveLength(MAX);
      expect(wellFormed(kept)).toBe(true);
      expect(memory.endsWith(kept)).toBe(true);
    }
  });

  it('counts characters as zod and PostgreSQL do: MEMORY of as many emoji as the limit is kept whole', () => {
    // PUT /v1/profile/memory takes it (zod counts an emoji once); JavaScript's length says twice as many.
    const memory = `${'🌱'.repeat(MAX / 2)}\n${'🌿'.repeat(MAX / 2 - 1)}`;
    expect(dropOldestMemory(memory)).toBe(memory);
  });
});

describe('clipSection', () => {
  it('keeps a section of as many emoji as the limit whole, and cuts a longer one to the limit', () => {
    const section = '🌱'.repeat(MAX);
    expect(clipSection(section)).toBe(section);
    const clipped = clipSection(`${section}🌱`);
    expect([...clipped]).toHaveLength(MAX);
    expect(clipped.endsWith('🌱...')).toBe(true);
  });
});
