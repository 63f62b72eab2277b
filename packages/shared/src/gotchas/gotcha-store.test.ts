import { pitfallLine, type Pitfall } from './gotcha-store';

const captured = (description: string, cause: Pitfall['cause'] = 'arguments'): Pitfall => ({
  tool_name: 'rename_document',
  description,
  source: 'auto_detected',
  occurrences: 3,
  cause,
});

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

  it("blames the arguments only for a failure that was the call's own problem", () => {
    const timedOut = pitfallLine(captured('rename_document failed after 2 attempts: timed out after 10 s', 'timeout'));
    expect(timedOut).toBe(
      'rename_document timed out 3 times (rename_document failed after 2 attempts: timed out after 10 s), not because of its arguments: ' +
        'if it times out again, tell the user instead of calling it again.',
    );
    const down = pitfallLine(captured('The MCP server "notes" is not available right now (connect ECONNREFUSED).', 'unavailable'));
    expect(down).toMatch(/^rename_document could not reach its server 3 times \(The MCP server "notes" is not available/);
    const broken = pitfallLine(captured('rename_document failed after 2 attempts: deadlock detected', 'failure'));
    expect(broken).toMatch(/^rename_document failed 3 times on its side \(.*deadlock detected\): if it fails again, tell the user/);
    for (const line of [timedOut, down, broken]) expect(line).not.toContain('Check the arguments');
  });

  it('shows a manual gotcha as written', () => {
    expect(pitfallLine({ tool_name: null, description: 'See folder_1 first.', source: 'manual', occurrences: 1, cause: null })).toBe(
      'See folder_1 first.',
    );
  });
});
