import { pitfallLine, type Pitfall } from './gotcha-store';

const captured = (description: string): Pitfall => ({ tool_name: 'rename_document', description, source: 'auto_detected', occurrences: 3 });

describe('pitfallLine', () => {
  it("shows a captured error without its session's refs or the user's candidates: pitfalls reach every session, groups too", () => {
    const line = pitfallLine(
      captured('No document named "Plano" was found. Candidates: "Diário íntimo" [ID: document_1], "Saúde [exames]" [ID: document_2].'),
    );
    expect(line).toBe(
      'rename_document failed 3 times this way: No document named "Plano" was found. Check the arguments before calling it again.',
    );
    expect(pitfallLine(captured('A document titled "Plano" already exists [ID: document_2].'))).toContain(
      'A document titled "Plano" already exists.',
    );
    expect(pitfallLine(captured('No document with ref document_7 exists (it may have been deleted).'))).toContain(
      'No document with ref <ref> exists',
    );
  });

  it('shows a manual gotcha as written', () => {
    expect(pitfallLine({ tool_name: null, description: 'See folder_1 first.', source: 'manual', occurrences: 1 })).toBe(
      'See folder_1 first.',
    );
  });
});
