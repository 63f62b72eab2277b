import { recipientOf, type ChannelAddress } from '@assistant/shared';
import { ChannelApiError, OutsideWindowError, type ChannelSender, type MarkdownFormatter, type OutboundPart } from '../channel-types';
import { formatParts } from '../format/markdown-split';
import { whatsappMarkup } from '../format/markup';
import { graphError, isBsuid, OUTSIDE_WINDOW_CODE, whatsappSendResponse } from './whatsapp.schemas';
import { templateContent } from './whatsapp.template';

const REQUEST_TIMEOUT_MS = 15_000;
/** Graph error codes that mean "too many messages, slow down" although the HTTP status is not 429. */
const RATE_LIMIT_CODES = new Set([4, 80007, 130429, 131048, 131056]);

/** Sends through the Cloud API: `POST {base}/{phone_number_id}/messages`. */
export class WhatsAppClient implements ChannelSender {
  // Text bodies take 4,096 characters, interactive bodies 1,024; margins keep parts under both.
  readonly limits = { text: 4_000, withButtons: 1_000 };
  private readonly url: string;

  constructor(
    baseUrl: string,
    phoneNumberId: string,
    private readonly accessToken: string,
  ) {
    this.url = `${baseUrl.replace(/\/+$/, '')}/${encodeURIComponent(phoneNumberId)}/messages`;
  }

  readonly formatMarkdown: MarkdownFormatter = (markdown, limit) =>
    formatParts(markdown, [whatsappMarkup], limit).map(([text = '']) => ({ text }));

  async send(to: ChannelAddress, part: OutboundPart): Promise<string> {
    const body = await this.post(
      { messaging_product: 'whatsapp', recipient_type: 'individual', ...addressee(to), ...content(part) },
      'send',
    );
    const sent = whatsappSendResponse.safeParse(body);
    if (!sent.success) throw new ChannelApiError('whatsapp send answered an unexpected result', 502);
    return (sent.data.messages[0] as { id: string }).id;
  }

  /** Marks the person's message read and, with `typing`, shows "typing…" until the answer (or about 25 s). */
  async markRead(messageId: string, { typing }: { typing: boolean }): Promise<void> {
    await this.post(
      { messaging_product: 'whatsapp', status: 'read', message_id: messageId, ...(typing ? { typing_indicator: { type: 'text' } } : {}) },
      'read receipt',
    );
  }

  private async post(payload: Record<string, unknown>, what: string): Promise<unknown> {
    const res = await fetch(this.url, {
      method: 'POST',
      headers: { authorization: `Bearer ${this.accessToken}`, 'content-type': 'application/json' },
      body: JSON.stringify(payload),
      signal: AbortSignal.timeout(REQUEST_TIMEOUT_MS),
    });
    const body: unknown = await res.json().catch(() => undefined);
    if (!res.ok) {
      const error = graphError.safeParse(body);
      const code = error.success ? error.data.error.code : undefined;
      const limited = res.status === 429 || (code !== undefined && RATE_LIMIT_CODES.has(code));
      const Refusal = code === OUTSIDE_WINDOW_CODE ? OutsideWindowError : ChannelApiError;
      throw new Refusal(
        `whatsapp ${what} failed: ${res.status}${code !== undefined ? ` (code ${code})` : ''} ${error.success ? (error.data.error.message ?? '') : ''}`.trim(),
        limited ? 429 : res.status,
        retryAfterMs(res.headers.get('retry-after')),
      );
    }
    return body;
  }
}

/** A part's `type` and its content: a template, reply buttons under a body, or plain text. */
function content(part: OutboundPart): Record<string, unknown> {
  if (part.template) return templateContent(part.template, part.text);
  if (!part.buttons) return { type: 'text', text: { body: part.text } };
  return {
    type: 'interactive',
    interactive: {
      type: 'button',
      body: { text: part.text },
      // At most 3 reply buttons, titles of at most 20 characters.
      action: { buttons: part.buttons.slice(0, 3).map((b) => ({ type: 'reply', reply: { id: b.id, title: b.title.slice(0, 20) } })) },
    },
  };
}

/**
 * `to` a phone number, `recipient` a BSUID (a user who hides their number; Meta reads `to` first
 * when both come). A message Meta will not send to a BSUID is refused with a 4xx (code 131062),
 * like any other refusal, so it is not asked again.
 */
function addressee(to: ChannelAddress): { to: string } | { recipient: string } {
  const id = recipientOf(to);
  return isBsuid(id) ? { recipient: id } : { to: id };
}

/** Retry-After as seconds or an HTTP date; undefined when absent or unreadable (then: backoff). */
export function retryAfterMs(header: string | null): number | undefined {
  if (!header) return undefined;
  if (/^\d+$/.test(header.trim())) return Number(header.trim()) * 1_000;
  const at = Date.parse(header);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}
