import { cleanTranscript } from './voice-transcription.job';

describe('cleanTranscript', () => {
  it('removes control characters as from any chat text, C1 ones too, and trims', () => {
    expect(cleanTranscript(' buy\u0000 milk\u0085\u009b\u0007\n and eggs\t ')).toBe('buy milk\n and eggs');
  });

  it('keeps at most 16,000 characters and reads blank as nothing heard', () => {
    expect(cleanTranscript('a'.repeat(20_000))).toHaveLength(16_000);
    expect(cleanTranscript(' \u0000 ')).toBe('');
  });
});
