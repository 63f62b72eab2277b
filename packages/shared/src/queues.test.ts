import type { Queue } from 'bullmq';
import { InvalidJobError } from './jobs';
import { addJob, type Queues } from './queues';
import { outboxJob } from './turns/outbox';

const sessionId = '3f2b8c1e-9d4a-4b7e-8f00-1234567890ab';

describe('enqueueing', () => {
  it('adds the parsed data under the given name and options', async () => {
    const add = jest.fn(() => Promise.resolve());
    const queues = { 'session-digests': { add } as unknown as Queue } as Pick<Queues, 'session-digests'>;
    await addJob(queues, 'session-digests', 'erase-user', { userId: sessionId }, { jobId: `erase.${sessionId}` });
    expect(add).toHaveBeenCalledWith('erase-user', { userId: sessionId }, { jobId: `erase.${sessionId}` });
  });

  it('gives a digest, which waits for the model, retries spanning hours', async () => {
    const add = jest.fn(() => Promise.resolve());
    const queues = { 'session-digests': { add } as unknown as Queue } as Pick<Queues, 'session-digests'>;
    await addJob(queues, 'session-digests', 'digest', { sessionId, reason: 'reset' }, { jobId: `digest-reset.${sessionId}` });
    expect(add).toHaveBeenCalledWith(
      'digest',
      { sessionId, reason: 'reset' },
      { attempts: 16, backoff: { type: 'exponential', delay: 1_000 }, jobId: `digest-reset.${sessionId}` },
    );
  });

  it('gives a chat message, which waits for its provider, retries spanning hours too', async () => {
    const add = jest.fn(() => Promise.resolve());
    const queues = { deliveries: { add } as unknown as Queue } as Pick<Queues, 'deliveries'>;
    const to = { channel: 'telegram', chat_id: '42' } as const;
    await addJob(queues, 'deliveries', 'reply', { to, text: 'Linked.' }, { jobId: `reply.${sessionId}` });
    expect(add).toHaveBeenCalledWith(
      'reply',
      { to, text: 'Linked.' },
      { attempts: 16, backoff: { type: 'exponential', delay: 1_000 }, jobId: `reply.${sessionId}` },
    );
  });

  it('refuses a payload its worker would reject, before it reaches Redis', async () => {
    const add = jest.fn(() => Promise.resolve());
    const queues = { 'session-digests': { add } as unknown as Queue } as Pick<Queues, 'session-digests'>;
    await expect(addJob(queues, 'session-digests', 'digest', { sessionId: 'not-a-uuid' })).rejects.toThrow(InvalidJobError);
    expect(add).not.toHaveBeenCalled();
  });

  it('refuses it in an outbox entry as soon as the entry is built', () => {
    expect(() => outboxJob('agent-turns', 'lane', { sessionId: 'not-a-uuid' })).toThrow(InvalidJobError);
  });
});
