import type { DbClient, OutboxEntry, RefRegistry, ToolArgs, ToolName, ToolResult } from '@assistant/shared';

/** What a tool handler gets besides its validated arguments. */
export interface ToolContext {
  /** A client inside the tool's transaction: the write and the task's completion commit together. */
  db: DbClient;
  userId: string;
  sessionId: string;
  /** Refs for the session: every id in a result goes through here; every `*_id` argument comes back through resolve(). */
  refs: RefRegistry;
  /** The id to give a row this call creates, chosen before the first attempt (a retry reuses it). */
  entityId: string;
  /** Aborted when the tool times out; the transaction is then rolled back. */
  signal: AbortSignal;
  /**
   * Queues a job (built with outboxJob) to be enqueued only if this call commits, for side
   * effects outside PostgreSQL such as scheduling a reminder.
   */
  afterCommit(entry: OutboxEntry): void;
}

export type ToolHandler<N extends ToolName> = (args: ToolArgs<N>, ctx: ToolContext) => Promise<ToolResult>;

/** A handler for every tool of the catalog: a tool without one does not compile. */
export type ToolHandlers = { [N in ToolName]: ToolHandler<N> };
