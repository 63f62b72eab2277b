import http from 'node:http';
import type { AddressInfo } from 'node:net';

/**
 * A server on a free loopback port that hands each request to `handle` with its whole body read:
 * the base of the fake model and the fake channel providers.
 */
export abstract class LocalHttpServer {
  private server?: http.Server;
  private port = 0;

  get baseUrl(): string {
    return `http://127.0.0.1:${this.port}`;
  }

  protected abstract handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): void | Promise<void>;

  async start(): Promise<this> {
    const server = http.createServer((req, res) => {
      let raw = '';
      req.on('data', (chunk: Buffer) => (raw += chunk.toString('utf8')));
      req.on('end', () => void this.handle(req, raw, res));
    });
    this.server = server;
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    this.port = (server.address() as AddressInfo).port;
    return this;
  }

  async stop(): Promise<void> {
    const server = this.server;
    if (!server) return;
    server.closeAllConnections();
    await new Promise<void>((resolve) => server.close(() => resolve()));
  }
}
