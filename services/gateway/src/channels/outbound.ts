import { eventSchemas, splitText, type JobData, type Queryable } from '@assistant/shared';
import { approvalButtons, continueButtons } from './buttons';
import type { Button, ChannelSender, MarkdownFormatter, MessageTemplate, OutboundPart } from './channel-types';

/** What a chat is sent: text, and buttons under its last part. */
export interface OutboundMessage {
  text: string;
  /** The model's answer is Markdown; our own texts (approvals, replies) are plain and sent as written. */
  markdown?: boolean;
  buttons?: Button[];
  /** Sent as one template message, whose parameter the channel's client fits to the template's rules. */
  template?: MessageTemplate;
}

/** Error codes whose message the system wrote for the user (agent-worker turn/budget-check.ts), shown as they are. */
const OWN_ERRORS: ReadonlySet<string> = new Set(['budget_exhausted', 'user_disabled']);

/**
 * How a turn event reads in a chat. Approvals name the task as the event stream's
 * `task_list` describes it (refs and names, never UUIDs).
 */
export async function renderTurnEvent(db: Queryable, data: JobData<'deliveries', 'turn-event'>): Promise<OutboundMessage> {
  const { event } = data;
  switch (event.type) {
    case 'message':
      return { text: eventSchemas.message.parse(event).content, markdown: true };
    case 'tool_approval_request': {
      const request = eventSchemas.tool_approval_request.parse(event);
      const task = await db.query<{ description: string }>(
        'SELECT k.description FROM approvals a JOIN tasks k ON k.id = a.task_id WHERE a.id = $1',
        [request.approval_id],
      );
      const what = task.rows[0]?.description ?? `${request.tool_name} ${JSON.stringify(request.arguments)}`;
      return { text: `May I do this?\n${what}`, buttons: approvalButtons(request.approval_id) };
    }
    case 'ask_user_continue':
      return { text: eventSchemas.ask_user_continue.parse(event).question, buttons: continueButtons(data.turnId) };
    case 'error': {
      // The event's message may quote a provider's error: the chat gets a plain apology instead,
      // except for ours: the budget's, which says when it resets, and a disabled account's (a
      // message accepted before an admin disabled its user), which "try again" would mislead.
      const error = eventSchemas.error.parse(event);
      if (OWN_ERRORS.has(error.code)) return { text: error.message };
      return { text: 'Sorry, something went wrong and I could not finish that. Please try again.' };
    }
  }
}

/** Parts under the channel's limits, in order; the buttons ride on the last one. */
export function outboundParts(
  message: OutboundMessage,
  limits: ChannelSender['limits'],
  formatMarkdown?: MarkdownFormatter,
): OutboundPart[] {
  if (message.text.trim() === '') return [];
  if (message.template) return [{ text: message.text, template: message.template }];
  const limit = message.buttons ? limits.withButtons : limits.text;
  const parts: OutboundPart[] =
    message.markdown && formatMarkdown ? formatMarkdown(message.text, limit) : splitText(message.text, limit).map((text) => ({ text }));
  const last = parts[parts.length - 1];
  if (last && message.buttons) last.buttons = message.buttons;
  return parts;
}
