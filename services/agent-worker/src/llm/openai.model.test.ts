import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAIChatModel } from './openai.model';

/** A compatible server that streams the given chunks' deltas as-is. */
async function serve(deltas: Record<string, unknown>[]): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    for (const delta of deltas) {
      res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta, finish_reason: null }] })}\n\n`);
    }
    res.end('data: [DONE]\n\n');
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () => new Promise((resolve) => server.close(() => resolve())),
  };
}

const request = (onToken: (delta: string) => void = () => undefined) => ({
  model: 'm',
  messages: [{ role: 'user' as const, content: 'hi' }],
  tools: [],
  onToken,
});

describe('OpenAIChatModel', () => {
  it('streams text through onToken and returns the whole answer', async () => {
    const fake = await serve([{ role: 'assistant', content: '' }, { content: 'Hel' }, { content: 'lo' }]);
    const tokens: string[] = [];
    const response = await new OpenAIChatModel({ baseURL: fake.url, timeoutMs: 5_000 }).complete(request((d) => void tokens.push(d)));
    await fake.close();
    expect(tokens).toEqual(['Hel', 'lo']);
    expect(response).toMatchObject({ content: 'Hello', toolCalls: [] });
  });

  it('assembles tool calls sent in fragments, with or without their index', async () => {
    const fake = await serve([
      { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'list_habits', arguments: '' } }] },
      { tool_calls: [{ index: 0, function: { arguments: '{}' } }] },
      { tool_calls: [{ id: 'b', type: 'function', function: { name: 'create_folder', arguments: '{"na' } }] },
      { tool_calls: [{ function: { arguments: 'me":"Work"}' } }] },
    ]);
    const response = await new OpenAIChatModel({ baseURL: fake.url, timeoutMs: 5_000 }).complete(request());
    await fake.close();
    expect(response.toolCalls).toEqual([
      { id: 'a', name: 'list_habits', arguments: '{}' },
      { id: 'b', name: 'create_folder', arguments: '{"name":"Work"}' },
    ]);
  });
});
