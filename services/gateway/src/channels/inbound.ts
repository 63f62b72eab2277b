import { jobId, withTransaction, type ControlOutcome, type DbClient, type JobData, type Queues, type Runtime } from '@assistant/shared';
import { resetSession } from '../sessions/reset-session';
import { insertTurn } from '../turns/submit-message';
import { channelDecisionSchema, parseButtonData, type ChannelDecision } from './buttons';
import type { InboundMessage } from './channel-types';
import { parseCommand, parseYesNo } from './commands';
import { applyDecision, openQuestionDecision } from './decisions';
import { channelSessionKey, identityUser, linkIdentity } from './identities';
import { consumeLinkCode } from './link-codes';

const REPLIES = {
  unsupported: 'I can only read text messages for now, not photos, stickers, voice notes, files or locations. Please type what you need.',
  linked: 'Linked: this chat now talks to your existing assistant.',
  badCode: 'That link code is not valid or has expired. Get a new one and send /link CODE within 10 minutes.',
  newSession: 'Started a new conversation.',
} as const;

/** What a message led to. Kept on its channel_messages row so a redelivery can finish publishing it. */
interface Outcome {
  userId: string | null;
  turnId: string | null;
  reply: string | null;
  decision: ChannelDecision | null;
}

export interface InboundResult {
  decision?: ChannelDecision;
  /** How applying the decision went; undefined when the message carried none. */
  decided?: ControlOutcome;
}

/**
 * Accepts one channel message durably: its (channel, external id) row and everything it causes
 * (a new user, a turn, a link, a reset) commit together, so a redelivery changes nothing. Then
 * the effects outside PostgreSQL run; each is idempotent, and a redelivery runs them again in
 * case a crash cut them short.
 */
export async function acceptInbound(runtime: Runtime, message: InboundMessage): Promise<InboundResult> {
  const accepted = await withTransaction(runtime.db, (client) => record(client, runtime.queues, message));
  const { outcome } = accepted;
  const decided = outcome.decision && outcome.userId ? await applyDecision(runtime, outcome.userId, outcome.decision) : undefined;
  if (outcome.turnId) await runtime.outbox.flush(outcome.turnId);
  if (outcome.reply) {
    const data: JobData<'deliveries', 'reply'> = { to: message.replyTo, text: outcome.reply };
    await runtime.queues.deliveries.add('reply', data, { jobId: jobId('reply', accepted.rowId) });
  }
  return { ...(outcome.decision ? { decision: outcome.decision } : {}), ...(decided ? { decided } : {}) };
}

async function record(client: DbClient, queues: Queues, message: InboundMessage): Promise<{ rowId: string; outcome: Outcome }> {
  // A concurrent copy of the same delivery waits here for the first to commit, then finds its row.
  const inserted = await client.query<{ id: string }>(
    `INSERT INTO channel_messages (channel, external_id) VALUES ($1, $2) ON CONFLICT (channel, external_id) DO NOTHING RETURNING id`,
    [message.channel, message.externalId],
  );
  const rowId = inserted.rows[0]?.id;
  if (!rowId) {
    const found = await client.query<{ id: string; user_id: string | null; turn_id: string | null; reply: string | null; decision: unknown }>(
      `SELECT id, user_id, turn_id, reply, decision FROM channel_messages WHERE channel = $1 AND external_id = $2`,
      [message.channel, message.externalId],
    );
    const row = found.rows[0];
    if (!row) throw new Error('channel message vanished while being redelivered');
    const decision = channelDecisionSchema.safeParse(row.decision);
    return {
      rowId: row.id,
      outcome: { userId: row.user_id, turnId: row.turn_id, reply: row.reply, decision: decision.success ? decision.data : null },
    };
  }
  const outcome = await handle(client, queues, message);
  await client.query(`UPDATE channel_messages SET user_id = $2, turn_id = $3, reply = $4, decision = $5 WHERE id = $1`, [
    rowId,
    outcome.userId,
    outcome.turnId,
    outcome.reply,
    outcome.decision ? JSON.stringify(outcome.decision) : null,
  ]);
  return { rowId, outcome };
}

async function handle(client: DbClient, queues: Queues, message: InboundMessage): Promise<Outcome> {
  const none: Outcome = { userId: null, turnId: null, reply: null, decision: null };
  const command = message.content.kind === 'text' ? parseCommand(message.content.text) : undefined;
  if (command?.kind === 'link') {
    // Linking must not create a user for the identity first: it is about to join an existing one.
    const userId = await consumeLinkCode(client, command.code);
    if (!userId) return { ...none, reply: REPLIES.badCode };
    await linkIdentity(client, message, userId);
    return { ...none, userId, reply: REPLIES.linked };
  }

  const userId = await identityUser(client, message);
  const content = message.content;
  if (content.kind === 'unsupported') return { ...none, userId, reply: REPLIES.unsupported };
  if (content.kind === 'button') return { ...none, userId, decision: parseButtonData(content.data) ?? null };

  const sessionKey = await channelSessionKey(client, userId, message);
  if (command?.kind === 'new') {
    // Digest first, then archive (CONTRACT §6), as POST /v1/sessions/:key/reset does.
    await resetSession(client, queues, userId, sessionKey);
    return { ...none, userId, reply: REPLIES.newSession };
  }
  const yes = parseYesNo(content.text);
  const decision = yes === undefined ? undefined : await openQuestionDecision(client, userId, yes);
  if (decision) return { ...none, userId, decision };
  const turnId = await insertTurn(client, { userId, sessionKey, text: content.text, origin: message.replyTo });
  return { ...none, userId, turnId };
}
