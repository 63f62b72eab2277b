import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { OpenAIChatModel } from './openai.model';

/** A compatible server that streams the given chunks' deltas as-is, then an optional usage chunk. */
async function serve(
  deltas: Record<string, unknown>[],
  usage?: Record<string, unknown>,
): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer((_req, res) => {
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (fields: Record<string, unknown>) =>
      res.write(`data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', ...fields })}\n\n`);
    for (const delta of deltas) chunk({ choices: [{ index: 0, delta, finish_reason: null }] });
    if (usage) chunk({ choices: [], usage });
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

  it("returns the last chunk's usage, cached prompt tokens included", async () => {
    const usage = { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127, prompt_tokens_details: { cached_tokens: 96 } };
    const fake = await serve([{ content: 'hi' }], usage);
    const response = await new OpenAIChatModel({ baseURL: fake.url, timeoutMs: 5_000 }).complete(request());
    await fake.close();
    expect(response.usage).toEqual({ promptTokens: 120, completionTokens: 7, cachedPromptTokens: 96 });
  });
});
