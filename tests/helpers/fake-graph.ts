import http from 'node:http';
import { LocalHttpServer } from '../../scripts/lib/local-http-server';

export interface GraphRequest {
  path: string;
  authorization: string | undefined;
  body: any;
  status: number;
  at: number;
}

/** A local Graph API server for WhatsApp sends (`POST /{phone_number_id}/messages`) that records them. */
export class FakeGraph extends LocalHttpServer {
  readonly requests: GraphRequest[] = [];
  private messageId = 1;

  get url(): string {
    return this.baseUrl;
  }

  protected handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): void {
    const body = raw ? JSON.parse(raw) : {};
    const ok = req.method === 'POST' && /^\/\d+\/messages$/.test(req.url ?? '');
    const status = ok ? 200 : 404;
    this.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body, status, at: Date.now() });
    const payload = ok
      ? { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.fake${this.messageId++}` }] }
      : { error: { message: 'Unknown path', type: 'OAuthException', code: 803 } };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
  }

  /** Messages sent to a WhatsApp user, in order. */
  received(waId: string): GraphRequest[] {
    return this.requests.filter((request) => request.body.to === waId && request.status === 200);
  }
}
