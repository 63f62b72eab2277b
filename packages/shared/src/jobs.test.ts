import { UnrecoverableError } from 'bullmq';
import { InvalidJobError, parseJob } from './jobs';

describe('parseJob', () => {
  it('returns the validated payload', () => {
    const turnId = '3f2b8c1e-9d4a-4b7e-8f00-1234567890ab';
    expect(parseJob('agent-turns', 'advance', { turnId })).toEqual({ turnId });
  });

  it.each([
    ['an unknown job name', 'agent-turns', 'explode', {}],
    ['a payload that does not match', 'agent-turns', 'advance', { turnId: 'not-a-uuid' }],
  ] as const)('fails %s for good, so the queue does not retry it', (_case, queue, name, data) => {
    expect(() => parseJob(queue, name, data)).toThrow(InvalidJobError);
    expect(() => parseJob(queue, name, data)).toThrow(UnrecoverableError);
  });
});
