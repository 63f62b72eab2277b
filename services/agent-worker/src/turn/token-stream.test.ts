import { TokenStream } from './token-stream';

describe('TokenStream', () => {
  it('writes the deltas at hand at once and the ones arriving meanwhile in one batch, in order', async () => {
    const written: string[][] = [];
    let finishWrite: () => void = () => undefined;
    const stream = new TokenStream(async (deltas) => {
      written.push(deltas);
      await new Promise<void>((resolve) => (finishWrite = resolve));
    });
    // Parsed from one network read: one write.
    stream.push('Hel');
    stream.push('lo');
    await new Promise((resolve) => setImmediate(resolve));
    expect(written).toEqual([['Hel', 'lo']]);
    // Arriving while it runs: the next write.
    stream.push(', ');
    stream.push('world');
    const drained = stream.drain();
    finishWrite();
    while (written.length < 2) await new Promise((resolve) => setImmediate(resolve));
    finishWrite();
    await drained;
    expect(written).toEqual([
      ['Hel', 'lo'],
      [', ', 'world'],
    ]);
  });

  it('skips what an earlier attempt of the call streamed, so the deltas add up to the answer once', async () => {
    const written: string[] = [];
    const stream = new TokenStream(async (deltas) => void written.push(...deltas), 'Hello, wo'.length);
    for (const delta of ['Hel', 'lo, ', 'wor', 'ld', '!']) stream.push(delta);
    await stream.drain();
    expect(written).toEqual(['r', 'ld', '!']);
  });

  it('reports a failed write when drained', async () => {
    const stream = new TokenStream(() => Promise.reject(new Error('redis down')));
    stream.push('x');
    await expect(stream.drain()).rejects.toThrow('redis down');
  });
});
