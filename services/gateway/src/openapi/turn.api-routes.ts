import { z } from 'zod';
import { sessionKeySchema } from '@assistant/shared';
import { uuidParam } from '../http/validate';
import { decideApprovalBody, listApprovalsQuery } from '../routes/approvals.routes';
import { MAX_MESSAGE_CHARS, postMessageBody } from '../routes/messages.routes';
import { continueTurnBody } from '../routes/turns.routes';
import { failure, type ApiRoute } from './api-route';
import * as shape from './api-schemas';

const turnId = { id: uuidParam };
const sessionKey = { key: sessionKeySchema };

/** Messages, turns and their event streams, approvals, sessions (CONTRACT §3–4). */
export const turnApiRoutes: ApiRoute[] = [
  {
    method: 'post',
    path: '/v1/messages',
    tag: 'turns',
    summary: 'Send a message: starts a turn',
    description:
      'Answers at once with the turn; follow it on `events_url`. Without `session_key` the message goes to the main ' +
      `session \`agent:main:main\`. An empty text answers 400; one over ${MAX_MESSAGE_CHARS} characters, 413. ` +
      'When the session is busy, `if_busy` decides: `queue` (default) waits its turn; `merge` joins the queued turn ' +
      '(its id is answered) or queues one; `reject` answers 409 `session_busy`; `interrupt` cancels the running turn ' +
      '(a started tool finishes) and starts this one at once.',
    auth: 'user',
    body: postMessageBody,
    example: { text: 'create folder Work', session_key: 'agent:main:api:direct:docs' },
    responses: {
      202: { description: 'the turn is queued', schema: shape.submittedResponse },
      409: failure('`if_busy: reject` and the session is busy (`session_busy`)'),
      413: failure(`the message is over ${MAX_MESSAGE_CHARS} characters, or the body over 1 MiB`),
      429: failure('over RATE_LIMIT_MESSAGES_PER_MINUTE; see Retry-After'),
    },
  },
  {
    method: 'get',
    path: '/v1/turns/:id',
    tag: 'turns',
    summary: "A turn's status",
    auth: 'user',
    params: turnId,
    responses: { 200: { description: 'the turn', schema: shape.turnResponse } },
  },
  {
    method: 'get',
    path: '/v1/turns/:id/events',
    tag: 'turns',
    summary: 'Server-Sent Events of a turn: the plan, each tool, approvals, the streamed answer',
    description:
      'Each event has `id:` (send it back in the `Last-Event-ID` header, or as `?last_event_id=`, to resume), ' +
      '`event: <type>` and `data:` one TurnEvent as JSON (see components.schemas.TurnEvent). Without `Last-Event-ID` ' +
      'the stream starts at the first event of the turn; it closes after `done`. A comment line comes at least every 15 s.',
    auth: 'user',
    params: turnId,
    responses: { 200: { description: 'the event stream', contentType: 'text/event-stream', schema: z.string() } },
  },
  {
    method: 'post',
    path: '/v1/turns/:id/cancel',
    tag: 'turns',
    summary: 'Cancel a turn: pending tasks are skipped',
    auth: 'user',
    params: turnId,
    responses: { 202: { description: 'cancelled', schema: shape.cancelResponse }, 409: failure('the turn has already finished') },
  },
  {
    method: 'post',
    path: '/v1/turns/:id/continue',
    tag: 'turns',
    summary: 'Answer an ask_user_continue: go on with the remaining tasks or stop',
    auth: 'user',
    params: turnId,
    body: continueTurnBody,
    example: { continue: true },
    responses: { 202: { description: 'answered', schema: shape.continueResponse }, 409: failure('the turn is not waiting for an answer') },
  },
  {
    method: 'get',
    path: '/v1/approvals',
    tag: 'approvals',
    summary: 'Approvals of tool calls in manual mode',
    auth: 'user',
    query: listApprovalsQuery,
    responses: { 200: { description: 'oldest first', schema: z.array(shape.approvalResponse) } },
  },
  {
    method: 'post',
    path: '/v1/approvals/:id',
    tag: 'approvals',
    summary: 'Approve or reject a tool call',
    auth: 'user',
    params: { id: uuidParam },
    body: decideApprovalBody,
    example: { decision: 'approve' },
    responses: { 200: { description: 'decided', schema: shape.decisionResponse }, 409: failure('already decided or expired') },
  },
  {
    method: 'get',
    path: '/v1/sessions',
    tag: 'sessions',
    summary: "The user's sessions, most recently active first",
    auth: 'user',
    responses: { 200: { description: 'the sessions', schema: z.array(shape.sessionResponse) } },
  },
  {
    method: 'get',
    path: '/v1/sessions/:key/messages',
    tag: 'sessions',
    summary: 'What the user and the assistant said in a session, oldest first',
    auth: 'user',
    params: sessionKey,
    responses: { 200: { description: 'the messages', schema: z.array(shape.sessionMessageResponse) } },
  },
  {
    method: 'post',
    path: '/v1/sessions/:key/reset',
    tag: 'sessions',
    summary: 'Digest the session now and start a fresh one under the same key',
    auth: 'user',
    params: sessionKey,
    responses: { 202: { description: 'reset', schema: shape.sessionResetResponse } },
  },
];
