import { randomUUID } from 'node:crypto';
import http from 'node:http';
import { LocalHttpServer } from '../../scripts/lib/local-http-server';
import { whatsappText } from './channel-fixtures';

/** What Meta says of a free-form message outside the 24-hour window, in a send's answer or a failed status. */
export const REENGAGEMENT = {
  messaging_product: 'whatsapp',
  details: 'Message failed to send because more than 24 hours have passed since the customer last replied to this number.',
};

export interface GraphRequest {
  path: string;
  authorization: string | undefined;
  body: any;
  status: number;
  at: number;
  /** The id a send was answered with. */
  messageId?: string;
}

/**
 * A local Graph API server for WhatsApp: sends and read receipts (`POST /{phone_number_id}/messages`),
 * and media (`GET /{media id}`, then its url, both with the bearer token). It records every request.
 */
export class FakeGraph extends LocalHttpServer {
  readonly requests: GraphRequest[] = [];
  /** Users whose 24-hour window is closed: a send to them other than a template is refused with code 131047. */
  readonly outsideWindow = new Set<string>();
  /**
   * Called with an accepted send's message id and recipient before the send is answered, which
   * waits for it: Meta's status webhook for a message can reach the gateway before that answer.
   */
  beforeAnswer?: (messageId: string, recipient: string) => Promise<unknown>;
  private readonly media = new Map<string, { mimeType: string; data: string }>();
  private messageId = 1;
  /** Test files share one database: each fake's message ids are its own, as Meta's are unique, so a status finds only its message. */
  private readonly messageIdPrefix = `wamid.fake.${randomUUID().slice(0, 8)}.`;

  /** Makes a media object (a voice note, an image) downloadable under its id. */
  addMedia(mediaId: string, mimeType: string, data: string): void {
    this.media.set(mediaId, { mimeType, data });
  }

  /** Read receipts (with or without a typing indicator), in order. */
  readReceipts(): GraphRequest[] {
    return this.requests.filter((request) => request.body.status === 'read');
  }

  /** The access token media downloads must carry. */
  token = 'wa-access-token';

  get url(): string {
    return this.baseUrl;
  }

  /** The gateway's WhatsApp settings for this server, its webhooks signed with `appSecret`, from the fixtures' number. */
  settings(appSecret: string, verifyToken = 'wa-verify-token'): Record<string, string> {
    return {
      WHATSAPP_ACCESS_TOKEN: this.token,
      WHATSAPP_APP_SECRET: appSecret,
      WHATSAPP_VERIFY_TOKEN: verifyToken,
      WHATSAPP_PHONE_NUMBER_ID: whatsappText.entry[0]?.changes[0]?.value.metadata.phone_number_id as string,
      WHATSAPP_API_BASE_URL: this.url,
    };
  }

  protected async handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): Promise<void> {
    const body = raw ? JSON.parse(raw) : {};
    if (req.method === 'GET') return this.serveMedia(req, res);
    if (body.status === 'read') {
      this.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body, status: 200, at: Date.now() });
      return void res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ success: true }));
    }
    const ok = req.method === 'POST' && /^\/\d+\/messages$/.test(req.url ?? '');
    // Meta reads `to` (a phone number) first; `recipient` is a BSUID.
    const refused = ok && body.type !== 'template' && this.outsideWindow.has(body.to ?? body.recipient);
    const status = !ok ? 404 : refused ? 400 : 200;
    const messageId = status === 200 ? `${this.messageIdPrefix}${this.messageId++}` : undefined;
    this.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body, status, at: Date.now(), messageId });
    if (messageId && this.beforeAnswer) await this.beforeAnswer(messageId, body.to ?? body.recipient);
    const payload =
      status === 200
        ? {
            messaging_product: 'whatsapp',
            contacts: [body.to ? { input: body.to, wa_id: body.to } : { input: body.recipient, user_id: body.recipient }],
            messages: [{ id: messageId }],
          }
        : refused
          ? { error: { message: '(#131047) Re-engagement message', type: 'OAuthException', code: 131047, error_data: REENGAGEMENT } }
          : { error: { message: 'Unknown path', type: 'OAuthException', code: 803 } };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
  }

  private serveMedia(req: http.IncomingMessage, res: http.ServerResponse): void {
    const path = req.url ?? '';
    const [, download, id = ''] = /^\/(media-download\/)?([^/?]+)$/.exec(path) ?? [];
    const media = this.media.get(decodeURIComponent(id));
    const authorized = req.headers.authorization === `Bearer ${this.token}`;
    const status = !authorized ? 401 : media ? 200 : 404;
    this.requests.push({ path, authorization: req.headers.authorization, body: {}, status, at: Date.now() });
    if (status !== 200 || !media)
      return void res
        .writeHead(status, { 'content-type': 'application/json' })
        .end(JSON.stringify({ error: { message: 'no', code: 100 } }));
    if (download) return void res.writeHead(200, { 'content-type': media.mimeType }).end(media.data);
    const info = {
      messaging_product: 'whatsapp',
      url: `${this.baseUrl}/media-download/${id}`,
      mime_type: media.mimeType,
      file_size: media.data.length,
      id,
    };
    res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(info));
  }

  /** Messages sent to a WhatsApp user, at their number (`to`) or their BSUID (`recipient`), in order. */
  received(waId: string): GraphRequest[] {
    return this.requests.filter((request) => (request.body.to ?? request.body.recipient) === waId && request.status === 200);
  }
}
