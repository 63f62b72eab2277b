import { z } from 'zod';

/**
 * Job payloads, validated when enqueued and again when a worker takes them. Fields are added as
 * optional so jobs already waiting in Redis keep validating after an upgrade.
 */
export const jobSchemas = {
  'agent-turns': {
    /** Start the oldest queued turn of a session if none of its turns is active. */
    lane: z.object({ sessionId: z.uuid() }),
    /** Run the next step of a turn's state machine. */
    advance: z.object({ turnId: z.uuid() }),
    /** Expire an approval nobody answered within APPROVAL_TTL_SECONDS. */
    'expire-approval': z.object({ approvalId: z.uuid() }),
  },
  'tool-calls': {
    'run-tool': z.object({ taskId: z.uuid(), turnId: z.uuid() }),
  },
} as const;

export type JobCatalog = typeof jobSchemas;
export type JobQueueName = keyof JobCatalog;
export type JobName<Q extends JobQueueName> = keyof JobCatalog[Q] & string;
export type JobData<Q extends JobQueueName, N extends JobName<Q>> = z.infer<
  JobCatalog[Q][N] extends z.ZodType ? JobCatalog[Q][N] : never
>;

export class UnknownJobError extends Error {}

/** Parses a job's data against its schema; an unknown name or bad payload cannot be retried. */
export function parseJob<Q extends JobQueueName>(queue: Q, name: string, data: unknown) {
  const schema = (jobSchemas[queue] as Record<string, z.ZodType>)[name];
  if (!schema) throw new UnknownJobError(`unknown job "${name}" on queue ${queue}`);
  return schema.parse(data);
}
