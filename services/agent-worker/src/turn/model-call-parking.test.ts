import { DelayedError, type Job } from 'bullmq';
import type { Logger } from '@assistant/shared';
import { BUSY_INLINE_WAIT_MS, INLINE_WAIT_MS, ModelCallParking } from './model-call-parking';

const logger = { debug: () => undefined } as unknown as Logger;

/** A job that records when it was moved to delayed, and a model call that answers after `ms`. */
function parkedCall(ms: number) {
  const delayedUntil: number[] = [];
  const job = {
    id: 'step-1',
    moveToDelayed: async (at: number) => {
      delayedUntil.push(at);
    },
    changeDelay: async () => undefined,
    remove: async () => undefined,
    promote: async () => undefined,
  } as unknown as Job;
  const call = new Promise<boolean>((resolve) => setTimeout(() => resolve(true), ms));
  return { job, call, delayedUntil };
}

describe('ModelCallParking', () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  const between = (BUSY_INLINE_WAIT_MS + INLINE_WAIT_MS) / 2;

  it('keeps the slot for a call that answers within INLINE_WAIT_MS while the worker has free slots', async () => {
    const parking = new ModelCallParking(30_000, logger, () => false);
    const { job, call, delayedUntil } = parkedCall(between);
    const outcome = parking.run(job, 'token', call);
    await jest.advanceTimersByTimeAsync(between);
    await expect(outcome).resolves.toBe(true);
    expect(delayedUntil).toEqual([]);
  });

  it('leaves the slot after BUSY_INLINE_WAIT_MS when every slot is taken, a job may be waiting for it', async () => {
    const parking = new ModelCallParking(30_000, logger, () => true);
    const { job, call, delayedUntil } = parkedCall(between);
    const outcome = expect(parking.run(job, 'token', call)).rejects.toBeInstanceOf(DelayedError);
    await jest.advanceTimersByTimeAsync(between);
    await outcome;
    expect(delayedUntil).toHaveLength(1);
  });

  it('keeps the slot for a call that answers within BUSY_INLINE_WAIT_MS, slots taken or not', async () => {
    const parking = new ModelCallParking(30_000, logger, () => true);
    const { job, call, delayedUntil } = parkedCall(BUSY_INLINE_WAIT_MS - 1);
    const outcome = parking.run(job, 'token', call);
    await jest.advanceTimersByTimeAsync(BUSY_INLINE_WAIT_MS - 1);
    await expect(outcome).resolves.toBe(true);
    expect(delayedUntil).toEqual([]);
  });
});
