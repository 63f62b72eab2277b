import {
  addJob,
  enqueueErasure,
  jobId,
  withTransaction,
  type ChannelAddress,
  type ControlOutcome,
  type DbClient,
  type Runtime,
} from '@assistant/shared';
import { resetSession } from '../sessions/reset-session';
import { insertTurn } from '../turns/submit-message';
import { isUserDisabled } from '../users/users.service';
import { channelDecisionSchema, parseButtonData, type ChannelDecision } from './buttons';
import type { InboundMessage } from './channel-types';
import { parseCommand, parseYesNo, type ChannelCommand } from './commands';
import { applyDecision, openQuestionDecision } from './decisions';
import {
  channelSessionKey,
  createIdentityUser,
  findIdentity,
  fromIdentity,
  linkIdentity,
  markIdentitySeen,
  readdressIdentity,
  type Identity,
} from './identities';
import { consumeLinkCode, countLinkAttempt } from './link-codes';
import { adoptLinkedAway } from './linked-away';
import { acceptMedia, pendingVoiceSchema, type PendingVoice } from './media-inbound';
import { rateDelay } from './message-rate';

const REPLIES = {
  unsupported:
    'I can only read text messages and voice notes for now, not photos, stickers, files or locations. Please type what you need.',
  // VISION=true: photos are read, so the reply must not turn people away from sending them.
  unsupportedWithVision:
    'I can only read text messages, photos and voice notes for now, not stickers, files or locations. Please type what you need.',
  linked: 'Linked: this chat now talks to your existing assistant.',
  linkedWithData:
    'Linked: this chat now talks to your existing assistant. Your folders, documents, habits, reminders, goals and memory from this chat moved there too; the earlier conversation here was not kept.',
  badCode: 'That link code is not valid or has expired. Get a new one and send /link CODE within 10 minutes.',
  linkTooOften: 'Too many /link attempts from this chat. Wait 10 minutes, then get a new code and send /link CODE.',
  linkBusy: 'Too many /link attempts right now. Please try again in a minute.',
  newSession: 'Started a new conversation.',
  disabled: 'This account is disabled, so I cannot answer. Please contact the operator of this assistant.',
} as const;

const NOTHING: Outcome = { userId: null, turnId: null, reply: null, decision: null, voice: null };

/** What a message led to. Kept on its channel_messages row so a redelivery can finish publishing it. */
interface Outcome {
  userId: string | null;
  turnId: string | null;
  reply: string | null;
  decision: ChannelDecision | null;
  /** A voice note whose transcript will take its place in the turn (voice-holds.ts). */
  voice: PendingVoice | null;
  /** The chat's own user, left behind by `/link` and marked for erasure: its job is queued once this commits. Not stored. */
  erasing?: string;
}

export interface InboundResult {
  /** Its channel_messages row. */
  rowId: string;
  /** The delivery was accepted before: it produces nothing new (docs/channels.md#webhooks). */
  redelivered: boolean;
  /** The user it acts as, if any. */
  userId?: string;
  /** It got a reply of its own (a disabled account's, say), sent by then. */
  replied: boolean;
  /** Where answers to it go: its identity's address, the number for a WhatsApp message without the number of an identity that has it. */
  replyTo: ChannelAddress;
  decision?: ChannelDecision;
  /** How applying the decision went; undefined when the message carried none. */
  decided?: ControlOutcome;
}

/**
 * Accepts one channel message durably: its (channel, external id) row and everything it causes
 * (a new user, a turn, a link, a reset) commit together, so a redelivery changes nothing. Then
 * the effects outside PostgreSQL run; each is idempotent, and a redelivery runs them again in
 * case a crash cut them short. That includes the decision: it names its approval or question, so
 * applying it again finds it decided and changes nothing (`redelivered` tells the channel not to
 * answer the press a second time).
 */
export async function acceptInbound(runtime: Runtime, received: InboundMessage): Promise<InboundResult> {
  const accepted = await withTransaction(runtime.db, (client) => record(client, runtime, received));
  const { outcome, redelivered, message } = accepted;
  // Lost to a crash before this line, the erasure sweeper queues it.
  if (outcome.erasing) await enqueueErasure(runtime.queues, outcome.erasing);
  const decided = outcome.decision && outcome.userId ? await applyDecision(runtime, outcome.userId, outcome.decision) : undefined;
  if (outcome.turnId) await runtime.outbox.flush(outcome.turnId);
  if (outcome.reply) {
    await addJob(
      runtime.queues,
      'deliveries',
      'reply',
      { to: message.replyTo, text: outcome.reply, channelMessageId: accepted.rowId },
      { jobId: jobId('reply', accepted.rowId) },
    );
  }
  // Again on a redelivery, in case a crash came first: the job's id, then its check of the turn, make it once.
  if (outcome.voice) {
    await addJob(
      runtime.queues,
      'deliveries',
      'transcribe',
      { channelMessageId: accepted.rowId },
      { jobId: jobId('transcribe', accepted.rowId) },
    );
  }
  return {
    rowId: accepted.rowId,
    redelivered,
    ...(outcome.userId ? { userId: outcome.userId } : {}),
    replied: outcome.reply !== null,
    replyTo: message.replyTo,
    ...(outcome.decision ? { decision: outcome.decision } : {}),
    ...(decided ? { decided } : {}),
  };
}

/** Why a button press changed nothing, in words for whoever pressed it; undefined when it was applied. */
export function refusedPress(result: InboundResult): string | undefined {
  if (!result.decision || !result.decided) return 'This button is no longer valid.';
  if (result.decided === 'conflict') return 'Already answered or expired.';
  if (result.decided === 'not_found') return 'This is not yours to answer.';
  return undefined;
}

async function record(
  client: DbClient,
  runtime: Runtime,
  received: InboundMessage,
): Promise<{ rowId: string; outcome: Outcome; redelivered: boolean; message: InboundMessage }> {
  // First: its locks serialise the sender's messages, and a redelivery's reply needs the identity's address too.
  const identity = await findIdentity(client, received, runtime.logger);
  const message = identity ? fromIdentity(received, identity) : received;
  // A concurrent copy of the same delivery waits here for the first to commit, then finds its row.
  const inserted = await client.query<{ id: string }>(
    `INSERT INTO channel_messages (channel, bot_id, external_id) VALUES ($1, $2, $3)
     ON CONFLICT (channel, bot_id, external_id) DO NOTHING RETURNING id`,
    [message.channel, message.botId ?? '', message.externalId],
  );
  const rowId = inserted.rows[0]?.id;
  if (!rowId) {
    const found = await client.query<{
      id: string;
      user_id: string | null;
      turn_id: string | null;
      reply: string | null;
      decision: unknown;
      media: unknown;
    }>(
      `SELECT id, user_id, turn_id, reply, decision, media FROM channel_messages WHERE channel = $1 AND bot_id = $2 AND external_id = $3`,
      [message.channel, message.botId ?? '', message.externalId],
    );
    const row = found.rows[0];
    if (!row) throw new Error('channel message vanished while being redelivered');
    const decision = channelDecisionSchema.safeParse(row.decision);
    const voice = pendingVoiceSchema.safeParse(row.media);
    return {
      rowId: row.id,
      redelivered: true,
      message,
      outcome: {
        userId: row.user_id,
        turnId: row.turn_id,
        reply: row.reply,
        decision: decision.success ? decision.data : null,
        voice: voice.success ? voice.data : null,
      },
    };
  }
  if (identity) await markIdentitySeen(client, identity.id);
  const outcome = await handle(client, runtime, message, identity, rowId);
  await client.query(`UPDATE channel_messages SET user_id = $2, turn_id = $3, reply = $4, decision = $5, media = $6 WHERE id = $1`, [
    rowId,
    outcome.userId,
    outcome.turnId,
    outcome.reply,
    outcome.decision ? JSON.stringify(outcome.decision) : null,
    outcome.voice ? JSON.stringify(outcome.voice) : null,
  ]);
  return { rowId, outcome, redelivered: false, message };
}

/**
 * Whether an unsupported message is the first of its album to say so: an album arrives as one
 * update per item, and one reply is enough. Its mark is a row of its own, in the same transaction.
 */
async function firstOfAlbum(client: DbClient, message: InboundMessage, userId: string): Promise<boolean> {
  if (message.album === undefined) return true;
  const marked = await client.query(
    `INSERT INTO channel_messages (channel, bot_id, external_id, user_id) VALUES ($1, $2, $3, $4)
     ON CONFLICT (channel, bot_id, external_id) DO NOTHING`,
    [message.channel, message.botId ?? '', `album:${message.album}`, userId],
  );
  return marked.rowCount === 1;
}

async function handle(
  client: DbClient,
  runtime: Runtime,
  message: InboundMessage,
  identity: Identity | undefined,
  rowId: string,
): Promise<Outcome> {
  const none = NOTHING;
  if (message.content.kind === 'changed-number') {
    // WhatsApp's notice, not the person's words: never answered (docs/channels.md#whatsapp-usernames-and-changed-numbers).
    if (!identity) return none;
    if (!(await readdressIdentity(client, message.channel, identity, message.content.to))) {
      runtime.logger.warn({ identityId: identity.id }, 'a changed WhatsApp number has an identity of its own: both left as they are');
    }
    return { ...none, userId: identity.userId };
  }
  const command = message.content.kind === 'text' ? parseCommand(message.content.text) : undefined;
  if (command?.kind === 'link') {
    // Linking must not create a user for the identity first: it is about to join an existing one.
    // A refused attempt stays the chat's own user's row, erased with them: its id can name the chat (a WhatsApp
    // message id holds the sender's number), while a row of nobody's waits for the retention's sweep (docs/channels.md#webhooks).
    const refused = { ...none, userId: identity?.userId ?? null };
    const attempt = await countLinkAttempt(runtime, message.channel, message.sender.id);
    if (attempt === 'sender-limited') return { ...refused, reply: REPLIES.linkTooOften };
    if (attempt === 'sender-silent') return refused;
    if (attempt === 'everyone-limited') return { ...refused, reply: REPLIES.linkBusy };
    const userId = await consumeLinkCode(client, command.code);
    if (!userId) return { ...refused, reply: REPLIES.badCode };
    await linkIdentity(client, message, userId);
    const left = identity ? await adoptLinkedAway(client, identity.userId, userId) : undefined;
    return {
      ...none,
      userId,
      reply: left?.moved ? REPLIES.linkedWithData : REPLIES.linked,
      ...(left?.erased && identity ? { erasing: identity.userId } : {}),
    };
  }

  return rateBoundReply(runtime, await handleOwn(client, runtime, message, identity, rowId, command));
}

/**
 * A reply the bot sends without a turn (to a sticker, a disabled account, `/new`) counts against
 * its user's message rate like any message; over it, none is sent: a flood of stickers must not
 * make the bot flood the chat (the providers penalise bots that do). What the message did stands.
 */
async function rateBoundReply(runtime: Runtime, outcome: Outcome): Promise<Outcome> {
  if (outcome.reply === null || outcome.userId === null) return outcome;
  return (await replyAllowed(runtime, outcome.userId)) ? outcome : { ...outcome, reply: null };
}

/** Counts a reply without a turn against the user's message rate: whether it may be sent. */
export async function replyAllowed(runtime: Runtime, userId: string): Promise<boolean> {
  return (await rateDelay(runtime, userId)) === undefined;
}

/** A message of the sender's own user (not `/link`, which is limited on its own). */
async function handleOwn(
  client: DbClient,
  runtime: Runtime,
  message: InboundMessage,
  identity: Identity | undefined,
  rowId: string,
  command: ChannelCommand | undefined,
): Promise<Outcome> {
  const { queues, config } = runtime;
  const none = NOTHING;
  const content = message.content;
  // Handled by handle(), before this.
  if (content.kind === 'changed-number') return none;
  // A button press never creates a user: a stranger's (on a forwarded message) decides nothing.
  const sender = identity ?? (content.kind === 'button' ? undefined : await createIdentityUser(client, message, config));
  if (!sender) return none;
  const { userId, admissionMs } = sender;
  if (await isUserDisabled(client, userId)) return { ...none, userId, reply: REPLIES.disabled };
  if (content.kind === 'unsupported') {
    if (!(await firstOfAlbum(client, message, userId))) return { ...none, userId };
    return { ...none, userId, reply: config.VISION ? REPLIES.unsupportedWithVision : REPLIES.unsupported };
  }
  if (content.kind === 'button') return { ...none, userId, decision: parseButtonData(content.data) ?? null };
  if (content.kind === 'voice' || content.kind === 'photo') {
    const media = await acceptMedia(client, runtime, message, rowId, userId, content, admissionMs);
    if ('reply' in media) return { ...none, userId, reply: media.reply };
    return { ...none, userId, turnId: media.turnId, voice: media.voice ?? null };
  }

  const sessionKey = await channelSessionKey(client, userId, message);
  if (command?.kind === 'new') {
    // Digest first, then archive (docs/channels.md#identities-and-linking), as POST /v1/sessions/:key/reset does.
    await resetSession(client, queues, userId, sessionKey);
    return { ...none, userId, reply: REPLIES.newSession };
  }
  const yes = parseYesNo(content.text);
  const decision = yes === undefined ? undefined : await openQuestionDecision(client, userId, { sessionKey, chat: message.replyTo }, yes);
  if (decision) return { ...none, userId, decision };
  // Chats merge by default (docs/agent.md#busy-sessions): "hi", "can you", "add milk" get one answer.
  const { turnId } = await insertTurn(client, config, {
    userId,
    sessionKey,
    text: content.text,
    origin: message.replyTo,
    ifBusy: 'merge',
    startAfterMs: await rateDelay(runtime, userId, admissionMs),
  });
  return { ...none, userId, turnId };
}
