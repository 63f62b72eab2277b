import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseConfig } from '@assistant/shared';
import { Transcriber } from './transcriber';

describe('Transcriber', () => {
  let server: http.Server;
  let baseUrl: string;

  beforeAll(async () => {
    // Answers the headers and the start of a body, then sends nothing more on the open connection.
    server = http.createServer((req, res) => {
      req.resume();
      req.on('end', () => {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.write('{"te');
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });

  afterAll(async () => {
    server.closeAllConnections();
    await new Promise((resolve) => server.close(resolve));
  });

  it('gives up on a transcription whose server stops sending in mid-answer', async () => {
    const config = parseConfig({ ...process.env, OPENAI_BASE_URL: baseUrl, MODEL_TIMEOUT_MS: '1000' });
    const audio = { data: Buffer.from('OggS'), mimeType: 'audio/ogg', fileName: 'voice.ogg' };
    await expect(new Transcriber(config).transcribe(audio)).rejects.toThrow();
  });
});
