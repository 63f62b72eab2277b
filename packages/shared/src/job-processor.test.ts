import { UnrecoverableError, type Job } from 'bullmq';
import { jobProcessor, type JobHandlers } from './job-processor';
import { InvalidJobError } from './jobs';

const reminderId = '3f2b8c1e-9d4a-4b7e-8f00-1234567890ab';
const at = '2026-01-01T09:00:00.000Z';

function job(name: string, data: unknown): Job {
  return { id: 'job-1', name, data } as unknown as Job;
}

describe('jobProcessor', () => {
  it("hands each job's parsed data to its own handler", async () => {
    const fired: unknown[] = [];
    const process = jobProcessor('reminders', {
      fire: (data) => Promise.resolve(void fired.push(data)),
      cancel: () => Promise.reject(new Error('not this one')),
    });
    await process(job('fire', { reminderId, at, extra: 'dropped by the schema' }));
    expect(fired).toEqual([{ reminderId, at }]);
    expect(process.queue).toBe('reminders');
  });

  it.each([
    ['an unknown job name', 'snooze', { reminderId, at }],
    ['a payload that does not match', 'fire', { reminderId, at: 'soon' }],
  ])('fails %s for good, without calling a handler', async (_case, name, data) => {
    const handler = jest.fn(() => Promise.resolve());
    const process = jobProcessor('reminders', { fire: handler, cancel: handler });
    await expect(process(job(name, data))).rejects.toThrow(InvalidJobError);
    await expect(process(job(name, data))).rejects.toThrow(UnrecoverableError);
    expect(handler).not.toHaveBeenCalled();
  });

  it('refuses, when built, a handler map that misses a job or handles one not in the catalogue', () => {
    const handler = () => Promise.resolve();
    const partial = { fire: handler, snooze: handler } as unknown as JobHandlers<'reminders'>;
    expect(() => jobProcessor('reminders', partial)).toThrow(
      'queue reminders: no handler for cancel; handlers for jobs not in the catalogue: snooze',
    );
  });
});
