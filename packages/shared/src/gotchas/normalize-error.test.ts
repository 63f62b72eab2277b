import { normalizeToolError } from './normalize-error';

describe('normalizeToolError', () => {
  it.each([
    [
      'numbers',
      'new_title: Too big: expected string to have <=255 characters',
      'new_title: Too big: expected string to have <=<n> characters',
    ],
    ['decimals and times', 'timed out after 10.5 s at 15:30', 'timed out after <n> s at <n>'],
    [
      'refs',
      'No document with ref document_12 exists (it may have been deleted).',
      'No document with ref <ref> exists (it may have been deleted).',
    ],
    ['UUIDs', 'row 0b6f1c1e-2f4a-4a57-9d3e-6b1f0a9c1d2e is locked', 'row <id> is locked'],
    ['double-quoted values', 'No folder named "Work stuff" was found.', 'No folder named "…" was found.'],
    ['curly quotes', 'No habit named “Yoga” was found.', 'No habit named "…" was found.'],
    ['single-quoted values, not apostrophes', "can't open 'Plan B': it's locked", 'can\'t open "…": it\'s locked'],
    ['whitespace', '  two\n  lines  ', 'two lines'],
  ])('strips %s', (_what, message, pattern) => {
    expect(normalizeToolError(message)).toBe(pattern);
  });

  it('reads the same error about different values the same way', () => {
    const one = normalizeToolError('No folder named "Work" was found. Candidates: "Home" [ID: folder_1].');
    const two = normalizeToolError('No folder named "Trabalho 2" was found. Candidates: "A" [ID: folder_3], "B" [ID: folder_9].');
    expect(one).toBe(two);
    expect(one).toBe('No folder named "…" was found. Candidates: "…" [ID: <ref>].');
  });

  it('reads candidate lists that say where or when each one is the same whatever their length', () => {
    const reminders = (times: string[]) =>
      normalizeToolError(
        `"water" matches ${times.length} reminders. Candidates: ${times.map((time, i) => `"Water" at 2031-11-24 ${time} (America/Sao_Paulo) [ID: reminder_${i + 1}]`).join(', ')}.`,
      );
    expect(reminders(['09:00', '15:00'])).toBe(reminders(['09:00', '12:00', '15:00']));
    expect(reminders(['09:00', '15:00'])).toBe('"…" matches <n> reminders. Candidates: "…" [ID: <ref>].');
    const folders = normalizeToolError(
      '"plan" matches 2 documents. Candidates: "Plan" in "A" [ID: document_1], "Plan" at the top level [ID: document_2].',
    );
    expect(folders).toBe(
      normalizeToolError(
        '"plan" matches 3 documents. Candidates: "Plan" in "A" [ID: document_1], "Plan" in "B" [ID: document_2], "PLAN" at the top level [ID: document_3].',
      ),
    );
  });

  it('reads a quoted value holding escaped quotes (the excerpt of arguments that were not JSON) as one value', () => {
    const refused = (title: string) => `The arguments were not valid JSON (they began: ${JSON.stringify(`{"title": "${title}", `)}).`;
    expect(normalizeToolError(refused('Plan A'))).toBe('The arguments were not valid JSON (they began: "…").');
    expect(normalizeToolError(refused('Lista de compras'))).toBe(normalizeToolError(refused('x')));
  });

  it('keeps errors that differ in kind apart, and bounds the length', () => {
    expect(normalizeToolError('title too long')).not.toBe(normalizeToolError('title blank'));
    expect(normalizeToolError('x'.repeat(2_000))).toHaveLength(500);
  });

  it('bounds the length without cutting an emoji in half', () => {
    // 3 characters, then emoji of two: the 500th character is the first half of one.
    expect(normalizeToolError(`no ${'🌱'.repeat(300)}`)).toBe(`no ${'🌱'.repeat(248)}`);
  });
});
