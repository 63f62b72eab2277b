import { Semaphore } from './semaphore';

describe('Semaphore', () => {
  it('runs at most size holders at once and the rest in arrival order', async () => {
    const semaphore = new Semaphore(2);
    let running = 0;
    let peak = 0;
    const order: number[] = [];
    const releases: (() => void)[] = [];
    const jobs = [1, 2, 3, 4].map((n) =>
      semaphore.use(async () => {
        running += 1;
        peak = Math.max(peak, running);
        order.push(n);
        await new Promise<void>((resolve) => releases.push(resolve));
        running -= 1;
      }),
    );
    while (releases.length < 2) await Promise.resolve();
    expect(order).toEqual([1, 2]);
    releases.shift()?.();
    while (releases.length < 2) await new Promise((resolve) => setImmediate(resolve));
    expect(order).toEqual([1, 2, 3]);
    while (order.length < 4 || releases.length > 0) {
      releases.shift()?.();
      await new Promise((resolve) => setImmediate(resolve));
    }
    await Promise.all(jobs);
    expect(order).toEqual([1, 2, 3, 4]);
    expect(peak).toBe(2);
  });

  it('frees the slot when the holder throws', async () => {
    const semaphore = new Semaphore(1);
    await expect(semaphore.use(() => Promise.reject(new Error('boom')))).rejects.toThrow('boom');
    await expect(semaphore.use(() => Promise.resolve('next'))).resolves.toBe('next');
  });
});
