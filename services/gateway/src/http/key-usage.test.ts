import type { Logger, Queryable } from '@assistant/shared';
import { KeyUsageRecorder } from './key-usage';

describe('KeyUsageRecorder', () => {
  it('writes a key on first use, then at most once per interval', () => {
    const writes: unknown[] = [];
    const db = {
      query: (_sql: string, params: unknown[]) => (writes.push(params[0]), Promise.resolve({ rows: [] })),
    } as unknown as Queryable;
    const recorder = new KeyUsageRecorder(db, { warn: () => undefined } as unknown as Logger, 1_000);
    recorder.touch('a', 0);
    recorder.touch('a', 500);
    recorder.touch('b', 600);
    recorder.touch('a', 999);
    recorder.touch('a', 1_000);
    expect(writes).toEqual(['a', 'b', 'a']);
  });
});
