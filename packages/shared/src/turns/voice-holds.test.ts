import { randomUUID } from 'node:crypto';
import { insertTestUser, testDb } from '../../../../tests/helpers/db';
import { withTransaction } from '../db';
import type { OutboxEntry } from './outbox';
import { headOfLane } from './lane-admission';
import { cancelTurnIn } from './continue-and-cancel';
import { createTurn, mergeIntoQueued } from './starting';
import { settleVoice, VOICE_PLACEHOLDER, voiceIsPending } from './voice-holds';

const db = testDb();
afterAll(() => db.end());

const lane = { maxActiveTurnsPerUser: 3, sessionIdleSeconds: 600 };
const origin = { channel: 'telegram' as const, chat_id: '42' };
const photo = { channel: 'telegram' as const, file_id: 'photo-1' };

interface Held {
  status: string;
  input: string;
  merged_inputs: string[];
  merged_attachments: { input: number; ref: unknown }[];
  voice_pending: { input: number; message: string }[];
  outbox: OutboxEntry[];
}
const turnRow = async (id: string) =>
  (await db.query<Held>('SELECT status, input, merged_inputs, merged_attachments, voice_pending, outbox FROM turns WHERE id = $1', [id]))
    .rows[0] as Held;
const due = async (sessionId: string) => withTransaction(db, async (client) => (await headOfLane(client, sessionId))?.due);
const settle = (turnId: string, message: string, transcript: string | undefined) =>
  withTransaction(db, (client) => settleVoice(client, turnId, message, transcript));
/** The lane jobs a transcript queued (the others: the turn's own, and the holds' wake-ups). */
const heardJobs = (row: Held) =>
  row.outbox.flatMap((entry) => (entry.kind === 'job' && entry.name === 'lane' && entry.jobId?.startsWith('heard.') ? [entry.jobId] : []));

/** A session whose queued turn holds voice note `first`, then `text` with a photo, then voice note `second`. */
async function heldTurn(first: string, second: string): Promise<{ turnId: string; sessionId: string }> {
  const { userId, sessionId } = await insertTestUser(db);
  return withTransaction(db, async (client) => {
    const hold = (message: string) => ({ text: VOICE_PLACEHOLDER, origin, voice: { message, holdMs: 600_000 } });
    const { id } = await createTurn(client, lane, { userId, sessionId, sessionKey: 'agent:main:main', ...hold(first) });
    expect(await mergeIntoQueued(client, sessionId, { text: '[photo] look', origin, attachment: photo })).toBe(id);
    expect(await mergeIntoQueued(client, sessionId, hold(second))).toBe(id);
    return { turnId: id, sessionId };
  });
}

describe('a voice note holding its place in a turn', () => {
  it('holds the turn until each transcript fills its place, then queues the lane job once', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    const { turnId, sessionId } = await heldTurn(first, second);
    expect((await turnRow(turnId)).status).toBe('queued');
    expect(await due(sessionId)).toBe(false);

    expect(await settle(turnId, second, 'and the second')).toBe('heard');
    expect(await due(sessionId)).toBe(false);
    expect(await settle(turnId, first, 'the first')).toBe('heard');
    expect(await settle(turnId, first, 'the first, again')).toBe('settled');
    expect(await voiceIsPending(db, turnId, first)).toBe(false);
    expect(await due(sessionId)).toBe(true);

    const row = await turnRow(turnId);
    expect([row.input, ...row.merged_inputs]).toEqual(['the first', '[photo] look', 'and the second']);
    expect(row.merged_attachments).toEqual([{ input: 1, ref: photo }]);
    expect(heardJobs(row)).toEqual([`heard.${first}`]);
  });

  it('gives up the place of a voice note that cannot be heard: the messages after it move up, with their photos and voice notes', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    const { turnId, sessionId } = await heldTurn(first, second);
    expect(await settle(turnId, first, undefined)).toBe('dropped');
    let row = await turnRow(turnId);
    expect([row.input, ...row.merged_inputs]).toEqual(['[photo] look', VOICE_PLACEHOLDER]);
    expect(row.merged_attachments).toEqual([{ input: 0, ref: photo }]);
    expect(row.voice_pending).toEqual([{ input: 1, message: second }]);
    expect(heardJobs(row)).toEqual([]);
    expect(await due(sessionId)).toBe(false);

    expect(await settle(turnId, second, 'the second')).toBe('heard');
    row = await turnRow(turnId);
    expect([row.input, ...row.merged_inputs]).toEqual(['[photo] look', 'the second']);
    expect(await due(sessionId)).toBe(true);
  });

  it('ends a turn whose only message could not be heard, without a model call', async () => {
    const { userId, sessionId } = await insertTestUser(db);
    const message = randomUUID();
    const { id } = await withTransaction(db, (client) =>
      createTurn(client, lane, {
        userId,
        sessionId,
        sessionKey: 'agent:main:main',
        text: VOICE_PLACEHOLDER,
        origin,
        voice: { message, holdMs: 600_000 },
      }),
    );
    expect(await settle(id, message, undefined)).toBe('ended');
    expect((await turnRow(id)).status).toBe('cancelled');
    expect(await settle(id, message, undefined)).toBe('settled');
  });

  it('hands on the transcript of a turn an interruption cancelled (its messages went to the interrupting turn), and drops a withdrawn one', async () => {
    const interrupted = await heldTurn(randomUUID(), randomUUID());
    const [voice] = (await turnRow(interrupted.turnId)).voice_pending;
    await withTransaction(db, (client) => cancelTurnIn(client, interrupted.turnId, { keepMessages: true }));
    expect(await settle(interrupted.turnId, voice?.message as string, 'heard after the interruption')).toBe('late');

    const withdrawn = await heldTurn(randomUUID(), randomUUID());
    const [other] = (await turnRow(withdrawn.turnId)).voice_pending;
    await withTransaction(db, (client) => cancelTurnIn(client, withdrawn.turnId));
    expect(await settle(withdrawn.turnId, other?.message as string, 'heard after a cancel')).toBe('withdrawn');
  });

  it('holds a turn for a bounded time: past it the turn is due with the placeholder, and a transcript after its start is late', async () => {
    const [first, second] = [randomUUID(), randomUUID()];
    const { turnId, sessionId } = await heldTurn(first, second);
    await db.query(`UPDATE turns SET voice_held_until = NOW() - interval '1 second' WHERE id = $1`, [turnId]);
    expect(await due(sessionId)).toBe(true);
    // As activateNext starts it.
    await db.query(`UPDATE turns SET status = 'running', started_at = NOW() WHERE id = $1`, [turnId]);
    expect(await settle(turnId, first, 'too late')).toBe('late');
    expect(await settle(turnId, first, 'too late')).toBe('settled');
    expect((await turnRow(turnId)).input).toBe(VOICE_PLACEHOLDER);
  });
});
