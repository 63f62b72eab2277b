import http from 'node:http';
import type { AddressInfo } from 'node:net';

export interface GraphRequest {
  path: string;
  authorization: string | undefined;
  body: any;
  status: number;
  at: number;
}

/** A local Graph API server for WhatsApp sends (`POST /{phone_number_id}/messages`) that records them. */
export class FakeGraph {
  readonly requests: GraphRequest[] = [];
  private server?: http.Server;
  private port = 0;
  private messageId = 1;

  get url(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  async start(): Promise<this> {
    this.server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      req.on('end', () => {
        const body = raw ? JSON.parse(raw) : {};
        const ok = req.method === 'POST' && /^\/\d+\/messages$/.test(req.url ?? '');
        const status = ok ? 200 : 404;
        this.requests.push({ path: req.url ?? '', authorization: req.headers.authorization, body, status, at: Date.now() });
        const payload = ok
          ? { messaging_product: 'whatsapp', contacts: [{ input: body.to, wa_id: body.to }], messages: [{ id: `wamid.fake${this.messageId++}` }] }
          : { error: { message: 'Unknown path', type: 'OAuthException', code: 803 } };
        res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
      });
    });
    await new Promise<void>((resolve) => this.server?.listen(0, '127.0.0.1', resolve));
    this.port = (this.server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise<void>((resolve) => (this.server ? this.server.close(() => resolve()) : resolve()));
  }

  /** Messages sent to a WhatsApp user, in order. */
  received(waId: string): GraphRequest[] {
    return this.requests.filter((request) => request.body.to === waId && request.status === 200);
  }
}
