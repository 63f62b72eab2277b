import { z } from 'zod';
import type { Button } from './channel-types';

/** A user's answer to an approval or to "continue?", from a button or a plain yes/no. */
export const channelDecisionSchema = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('approval'), approvalId: z.uuid(), approve: z.boolean() }),
  z.object({ kind: z.literal('continue'), turnId: z.uuid(), proceed: z.boolean() }),
]);
export type ChannelDecision = z.infer<typeof channelDecisionSchema>;

/** Telegram's limit for callback_data; WhatsApp reply ids allow 256 characters. */
export const MAX_BUTTON_DATA_BYTES = 64;

// `a:<approval id>:y` is 40 bytes: well under both providers' limits.
const BUTTON_DATA = /^([ac]):([0-9a-f-]{36}):([yn])$/;

export function buttonData(decision: ChannelDecision): string {
  return decision.kind === 'approval'
    ? `a:${decision.approvalId}:${decision.approve ? 'y' : 'n'}`
    : `c:${decision.turnId}:${decision.proceed ? 'y' : 'n'}`;
}

export function parseButtonData(data: string): ChannelDecision | undefined {
  const match = BUTTON_DATA.exec(data);
  if (!match) return undefined;
  const [, kind, id, answer] = match;
  const parsed = channelDecisionSchema.safeParse(
    kind === 'a'
      ? { kind: 'approval', approvalId: id, approve: answer === 'y' }
      : { kind: 'continue', turnId: id, proceed: answer === 'y' },
  );
  return parsed.success ? parsed.data : undefined;
}

/** Yes/no buttons; titles stay within WhatsApp's 20 characters. */
export function approvalButtons(approvalId: string): Button[] {
  return [
    { id: buttonData({ kind: 'approval', approvalId, approve: true }), title: '✅ Approve' },
    { id: buttonData({ kind: 'approval', approvalId, approve: false }), title: '❌ Reject' },
  ];
}

export function continueButtons(turnId: string): Button[] {
  return [
    { id: buttonData({ kind: 'continue', turnId, proceed: true }), title: '▶️ Continue' },
    { id: buttonData({ kind: 'continue', turnId, proceed: false }), title: '⏹ Stop' },
  ];
}
