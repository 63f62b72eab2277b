import {
  ACTIVE_STATUSES,
  ALLOWANCE_COLUMNS,
  allowanceOf,
  appendMemory,
  budgetExhausted,
  localDateTime,
  nameRefs,
  nextUtcMidnight,
  recordDigestUsage,
  sessionRefNames,
  stripUuids,
  summarizeMessages,
  withTransaction,
  type AllowanceRow,
  type Db,
  type ModelUsage,
  type RefNames,
  type SharedMetrics,
} from '@assistant/shared';
import { allowedModel } from '../llm/allowed-model';
import { callUsage } from '../llm/call-usage';
import { measuredCall } from '../llm/measured-call';
import type { ChatModel, ChatRequest } from '../llm/chat-model';
import { DIGEST_INSTRUCTIONS, digestTranscript, type DigestMessage } from './digest-transcript';

export interface DigestDeps {
  db: Db;
  model: ChatModel;
  metrics: SharedMetrics;
  defaultModel: string;
  /** MODEL_ALLOWLIST: a digest goes to the model the user's turns go to. */
  modelAllowlist: readonly string[] | undefined;
  idleSeconds: number;
  /** DAILY_TOKEN_BUDGET: the default for users without an override. */
  dailyTokenBudget: number;
  now?: () => Date;
}

export type DigestOutcome =
  | { kind: 'digested'; rounds: number }
  | { kind: 'nothing-new' }
  | { kind: 'not-idle'; retryInMs: number }
  | { kind: 'over-budget'; retryInMs: number }
  | { kind: 'gone' };

/** Messages read per round; a round also stops at the transcript's size limit. */
const BATCH_MESSAGES = 300;
/** Size of the offline planner's stand-in digest (it is not a language model). */
const OFFLINE_DIGEST_CHARS = 1_500;

/** Another digest of the session committed first: a retry digests what is left. */
export class DigestConflictError extends Error {}

/** `disabled`: an admin disabled the user; no model call is made for them until they are enabled again. */
interface SessionState extends AllowanceRow {
  user_id: string;
  session_key: string;
  digested_until: number;
  archived: boolean;
  busy: boolean;
  quiet_ms: number;
  model: string | null;
  /** The user's IANA zone: the digest's heading is dated there. */
  time_zone: string;
}

interface Summary {
  text: string;
  /** The model call's tokens, counted like a turn's (none for the offline planner). */
  usage: ModelUsage | undefined;
}

/**
 * The session digest (docs/memory.md#session-digests): the model summarises the session's messages since the last
 * digest and the summary is appended to the user's MEMORY under a dated heading, moving
 * `sessions.digested_until` in the same transaction. Nothing is lost when it fails: the mark
 * moves only with the summary, and the error goes back to the queue for a retry.
 *
 * Unless forced (a reset) or archived, a session is digested only when it is idle: no turn in
 * progress and quiet for `idleSeconds` since its last message. Otherwise the caller is told
 * when to look again. A disabled user's sessions are looked at again after `idleSeconds`.
 * The model call counts against DAILY_TOKEN_BUDGET like a turn's: past it, no call is made and the
 * messages wait, undigested, for the next UTC day's budget.
 */
export async function digestSession(deps: DigestDeps, sessionId: string, options: { force: boolean }): Promise<DigestOutcome> {
  let rounds = 0;
  for (;;) {
    const session = await loadSession(deps.db, sessionId);
    if (!session) return { kind: 'gone' };
    // Put off, not dropped: once the user is enabled again, the digest runs as it would have.
    if (session.disabled && rounds === 0) return { kind: 'not-idle', retryInMs: deps.idleSeconds * 1_000 };
    if (!options.force && !session.archived && rounds === 0) {
      const idleMs = deps.idleSeconds * 1_000;
      if (session.busy) return { kind: 'not-idle', retryInMs: idleMs };
      if (session.quiet_ms < idleMs) return { kind: 'not-idle', retryInMs: idleMs - session.quiet_ms };
    }
    const pending = await deps.db.query<DigestMessage>(
      `SELECT id, role, content, tool_calls FROM messages WHERE session_id = $1 AND id > $2 ORDER BY id LIMIT ${BATCH_MESSAGES}`,
      [sessionId, session.digested_until],
    );
    const transcript = digestTranscript(pending.rows);
    if (!transcript) return rounds > 0 ? { kind: 'digested', rounds } : { kind: 'nothing-new' };
    const covered = pending.rows.filter((message) => message.id <= transcript.lastId);
    // Messages without text (an empty answer) only move the mark.
    const spoken = transcript.text.trim() !== '';
    if (spoken && deps.model.name !== 'offline' && budgetExhausted(allowanceOf(session, deps.dailyTokenBudget))) {
      const now = deps.now?.() ?? new Date();
      return { kind: 'over-budget', retryInMs: nextUtcMidnight(now).getTime() - now.getTime() };
    }
    // MEMORY outlives the session and its refs: the digest names things instead (ids/ref-names.ts in packages/shared).
    const refs = await sessionRefNames(deps.db, sessionId);
    const summary = spoken ? await summarise(deps, session, transcript.text, covered, refs) : null;
    await commit(deps, sessionId, session, transcript.lastId, summary);
    rounds += 1;
  }
}

async function loadSession(db: Db, sessionId: string): Promise<SessionState | undefined> {
  const found = await db.query<SessionState>(
    `SELECT s.user_id, s.session_key, s.digested_until, s.archived_at IS NOT NULL AS archived,
            EXISTS (SELECT 1 FROM turns t WHERE t.session_id = s.id AND t.status = ANY($2)) AS busy, ${ALLOWANCE_COLUMNS},
            (EXTRACT(EPOCH FROM NOW() - GREATEST(s.last_activity_at,
               COALESCE((SELECT MAX(m.created_at) FROM messages m WHERE m.session_id = s.id), s.last_activity_at))) * 1000)::float8 AS quiet_ms,
            p.default_model AS model, COALESCE(p.timezone, 'UTC') AS time_zone
     FROM sessions s JOIN users u ON u.id = s.user_id LEFT JOIN user_preferences p ON p.user_id = s.user_id
     WHERE s.id = $1`,
    [sessionId, ACTIVE_STATUSES],
  );
  return found.rows[0];
}

async function summarise(
  deps: DigestDeps,
  session: SessionState,
  transcript: string,
  messages: DigestMessage[],
  refs: RefNames,
): Promise<Summary> {
  // The offline planner would answer a transcript with its help text; an extract serves better.
  if (deps.model.name === 'offline') {
    const spoken = messages.filter((m) => m.role !== 'tool').map((m) => ({ ...m, content: nameRefs(m.content, refs), tool_call_id: null }));
    return { text: summarizeMessages(spoken, OFFLINE_DIGEST_CHARS), usage: undefined };
  }
  const request: ChatRequest = {
    model: allowedModel(deps, session.model),
    messages: [
      { role: 'system', content: DIGEST_INSTRUCTIONS },
      // A client's own id in the key (a web app's conversation UUID) is no more the model's business than ours.
      { role: 'user', content: `Transcript of session ${stripUuids(session.session_key)}:\n\n${nameRefs(transcript, refs)}` },
    ],
    tools: [],
    onToken: () => undefined,
  };
  const response = await measuredCall(deps, request);
  // A ref the model wrote anyway (from a user's message, say) is named too.
  return { text: nameRefs(stripUuids(response.content.trim()), refs), usage: callUsage(deps.model, request, response) };
}

/**
 * Appends the summary and moves the mark, recording the call's usage in the same transaction, so
 * a retry counts it once. A call made for nothing (an empty answer, another digest committed
 * first) was made all the same: its usage is recorded before the error goes to the queue.
 */
async function commit(deps: DigestDeps, sessionId: string, session: SessionState, lastId: number, summary: Summary | null): Promise<void> {
  const failure = await withTransaction(deps.db, async (client) => {
    if (summary?.usage) await recordDigestUsage(client, session.user_id, sessionId, summary.usage);
    if (summary?.text === '') return new Error('the model returned an empty digest');
    const locked = await client.query<{ digested_until: number }>('SELECT digested_until FROM sessions WHERE id = $1 FOR UPDATE', [
      sessionId,
    ]);
    if (locked.rows[0]?.digested_until !== session.digested_until) {
      return new DigestConflictError(`session ${sessionId} was digested by another job meanwhile`);
    }
    if (summary) {
      const heading = digestHeading(deps.now?.() ?? new Date(), session.time_zone, session.session_key);
      await appendMemory(client, session.user_id, `${heading}\n${summary.text}`);
    }
    await client.query('UPDATE sessions SET digested_until = $2 WHERE id = $1', [sessionId, lastId]);
    return undefined;
  });
  if (failure) throw failure;
}

/**
 * `### Session digest 2026-02-16 11:05 America/Sao_Paulo (agent:main:main)`: nested under
 * `## Long-term Memory`. Dated in the user's zone, as every time the user and the model see is
 * (the turn's clock line too), so "yesterday evening" is the evening MEMORY names.
 */
export function digestHeading(at: Date, timeZone: string, sessionKey: string): string {
  return `### Session digest ${localDateTime(at, timeZone)} ${timeZone} (${sessionKey})`;
}
