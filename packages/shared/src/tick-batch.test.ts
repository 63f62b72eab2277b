import { tickBatched } from './tick-batch';

describe('tickBatched', () => {
  it('answers the calls of one tick with one fetch, each its own key, repeated keys fetched once', async () => {
    const fetched: string[][] = [];
    const lookup = tickBatched(async (keys: string[]) => {
      fetched.push(keys);
      return new Map(keys.filter((key) => key !== 'unknown').map((key) => [key, key.toUpperCase()]));
    });
    const answers = await Promise.all([lookup('a'), lookup('b'), lookup('a'), lookup('unknown')]);
    expect(answers).toEqual(['A', 'B', 'A', undefined]);
    expect(fetched).toEqual([['a', 'b', 'unknown']]);

    // A later tick is a batch of its own.
    expect(await lookup('c')).toBe('C');
    expect(fetched).toHaveLength(2);
  });

  it('fails every call of a batch whose fetch fails, and the next batch fetches again', async () => {
    let fail = true;
    const lookup = tickBatched(async (keys: number[]) => {
      if (fail) throw new Error('database down');
      return new Map(keys.map((key) => [key, key * 2]));
    });
    const outcomes = await Promise.allSettled([lookup(1), lookup(2)]);
    expect(outcomes.map((outcome) => outcome.status)).toEqual(['rejected', 'rejected']);
    fail = false;
    expect(await lookup(2)).toBe(4);
  });
});
