import { digestTranscript, TRANSCRIPT_LIMITS, type DigestMessage } from './digest-transcript';

const message = (
  id: number,
  role: DigestMessage['role'],
  content: string,
  tool_calls: DigestMessage['tool_calls'] = null,
): DigestMessage => ({
  id,
  role,
  content,
  tool_calls,
});

describe('digestTranscript', () => {
  it('reads user and assistant text, tool calls and the outcome of tool results', () => {
    const transcript = digestTranscript([
      message(1, 'user', 'rename Plan to Plan 2026'),
      message(2, 'assistant', '', [{ id: 'c1', name: 'rename_document', arguments: '{"document_id":"Plan"}' }]),
      message(3, 'tool', JSON.stringify({ success: false, error: 'No document named "Plan" was found.' })),
      message(4, 'tool', JSON.stringify({ success: true, message: 'Folder "Work" created [ID: folder_1].' })),
      message(5, 'assistant', 'I could not find it.'),
    ]);
    expect(transcript).toEqual({
      lastId: 5,
      text: [
        'User: rename Plan to Plan 2026',
        'Assistant called: rename_document {"document_id":"Plan"}',
        'Tool result: failed: No document named "Plan" was found.',
        'Tool result: Folder "Work" created [ID: folder_1].',
        'Assistant: I could not find it.',
      ].join('\n'),
    });
  });

  it('takes the oldest messages that fit, so the rest are left for the next round', () => {
    const messages = Array.from({ length: 100 }, (_, i) => message(i + 1, 'user', 'x'.repeat(5_000)));
    const transcript = digestTranscript(messages);
    expect(transcript?.text.length).toBeLessThanOrEqual(TRANSCRIPT_LIMITS.totalChars);
    expect(transcript?.lastId).toBe(Math.floor(TRANSCRIPT_LIMITS.totalChars / (TRANSCRIPT_LIMITS.lineChars + 1)));
    expect(digestTranscript([])).toBeUndefined();
  });

  it('hides UUIDs', () => {
    expect(digestTranscript([message(1, 'user', 'id 0b6f1c1e-2f4a-4a57-9d3e-6b1f0a9c1d2e')])?.text).toBe('User: id [hidden id]');
  });
});
