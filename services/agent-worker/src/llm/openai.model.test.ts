import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { APIConnectionError, APIConnectionTimeoutError, APIError } from 'openai';
import { isPermanentModelError } from '@assistant/shared';
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

  it('keeps the name of a tool call whose server sends it again with every fragment', async () => {
    const fake = await serve([
      { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'create_folder', arguments: '' } }] },
      { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'create_folder', arguments: '{"name":' } }] },
      { tool_calls: [{ index: 0, id: 'a', type: 'function', function: { name: 'create_folder', arguments: '"Work"}' } }] },
    ]);
    const response = await new OpenAIChatModel({ baseURL: fake.url, timeoutMs: 5_000 }).complete(request());
    await fake.close();
    expect(response.toolCalls).toEqual([{ id: 'a', name: 'create_folder', arguments: '{"name":"Work"}' }]);
  });

  it("returns the last chunk's usage, cached prompt tokens included", async () => {
    const usage = { prompt_tokens: 120, completion_tokens: 7, total_tokens: 127, prompt_tokens_details: { cached_tokens: 96 } };
    const fake = await serve([{ content: 'hi' }], usage);
    const response = await new OpenAIChatModel({ baseURL: fake.url, timeoutMs: 5_000 }).complete(request());
    await fake.close();
    expect(response.usage).toEqual({ promptTokens: 120, completionTokens: 7, cachedPromptTokens: 96 });
  });

  it("leaves out what is not of the API's types: a chunk without choices, content that is not text, a tool call fragment that is not an object", async () => {
    const { url, close } = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      for (const fields of [
        { object: 'chat.completion.chunk' }, // no choices at all
        { choices: [{ index: 0, delta: { content: 5 } }] },
        { choices: [{ index: 0, delta: { content: { text: 'x' } } }] },
        { choices: [{ index: 0, delta: { content: 'Hi' } }] },
        { choices: [{ index: 0, delta: { tool_calls: 'list_habits' } }] },
        { choices: [{ index: 0, delta: { tool_calls: [null, { index: 0, id: 7, function: { name: 'list_habits', arguments: '{}' } }] } }] },
      ]) {
        res.write(`data: ${JSON.stringify({ id: 'x', created: 0, model: 'm', ...fields })}\n\n`);
      }
      res.end('data: [DONE]\n\n');
    });
    const tokens: string[] = [];
    const response = await new OpenAIChatModel({ baseURL: url, timeoutMs: 5_000 })
      .complete(request((d) => void tokens.push(d)))
      .finally(close);
    expect(tokens).toEqual(['Hi']);
    expect(response).toMatchObject({ content: 'Hi', toolCalls: [{ id: '', name: 'list_habits', arguments: '{}' }] });
  });

  it('takes usage only as counts: rounded, capped, cached within the prompt; a report that is not counts is left out', async () => {
    const complete = async (usage: Record<string, unknown>) => {
      const fake = await serve([{ content: 'hi' }], usage);
      const response = await new OpenAIChatModel({ baseURL: fake.url, timeoutMs: 5_000 }).complete(request()).finally(fake.close);
      return response.usage;
    };
    expect(await complete({ prompt_tokens: 3e9, completion_tokens: 2.5, prompt_tokens_details: { cached_tokens: 4e9 } })).toEqual({
      promptTokens: 1_000_000_000,
      completionTokens: 3,
      cachedPromptTokens: 1_000_000_000,
    });
    expect(await complete({ prompt_tokens: 10, completion_tokens: 2, prompt_tokens_details: { cached_tokens: 50 } })).toEqual({
      promptTokens: 10,
      completionTokens: 2,
      cachedPromptTokens: 10,
    });
    expect(await complete({ prompt_tokens: -1_000, completion_tokens: 5 })).toBeUndefined();
    expect(await complete({ prompt_tokens: 'many', completion_tokens: null })).toBeUndefined();
  });

  it('skips a chunk that is JSON but not an object, and fails a stream with a chunk that is not JSON as an endpoint error, to retry', async () => {
    const stream = (chunks: string[]) =>
      listen((_req, res) => {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        for (const data of chunks) res.write(`data: ${data}\n\n`);
        res.end('data: [DONE]\n\n');
      });
    const hi = JSON.stringify({ id: 'x', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'Hi' } }] });
    const nulls = await stream(['null', '5', hi]);
    const response = await new OpenAIChatModel({ baseURL: nulls.url, timeoutMs: 5_000 }).complete(request()).finally(nulls.close);
    expect(response.content).toBe('Hi');

    const garbled = await stream([hi, 'not json at all']);
    const error = await new OpenAIChatModel({ baseURL: garbled.url, timeoutMs: 5_000 })
      .complete(request())
      .catch((e: unknown) => e)
      .finally(garbled.close);
    expect(error).toBeInstanceOf(APIError);
    expect(isPermanentModelError(error)).toBe(false);
  });

  it('sends the key and the streamed request, and surfaces a refusal with its status', async () => {
    let seen: { auth?: string; body?: Record<string, unknown> } = {};
    const { url, close } = await listen((req, res) => {
      let text = '';
      req.on('data', (chunk: Buffer) => (text += chunk.toString('utf8')));
      req.on('end', () => {
        seen = { auth: req.headers.authorization, body: JSON.parse(text) as Record<string, unknown> };
        res.writeHead(401, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: { message: 'Incorrect API key provided', type: 'invalid_request_error' } }));
      });
    });
    const error = await new OpenAIChatModel({ apiKey: 'sk-test', baseURL: url, timeoutMs: 5_000 })
      .complete(request())
      .catch((e: unknown) => e);
    await close();
    expect(seen.auth).toBe('Bearer sk-test');
    expect(seen.body).toMatchObject({ model: 'm', stream: true, messages: [{ role: 'user', content: 'hi' }] });
    expect(error).toBeInstanceOf(APIError);
    expect((error as APIError).status).toBe(401);
    expect(isPermanentModelError(error)).toBe(true);
  });

  it('fails a call whose answer breaks off mid-stream, or never starts within the timeout', async () => {
    const { url, close } = await listen((req, res) => {
      if (req.url?.endsWith('/chat/completions')) {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write(
          `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\n`,
        );
        setTimeout(() => res.socket?.destroy(), 20);
      }
    });
    const tokens: string[] = [];
    await expect(
      new OpenAIChatModel({ baseURL: url, timeoutMs: 5_000 }).complete(request((delta) => void tokens.push(delta))),
    ).rejects.toThrow();
    expect(tokens).toEqual(['Hel']);

    const silent = await listen(() => undefined); // takes the request, never answers
    const timedOut = await new OpenAIChatModel({ baseURL: silent.url, timeoutMs: 100 }).complete(request()).catch((e: unknown) => e);
    expect(timedOut).toBeInstanceOf(APIConnectionTimeoutError);
    await Promise.all([close(), silent.close()]);
  });

  it('fails a call whose answer stops coming after its first chunk once the timeout passes, never taking the part as the answer', async () => {
    const { url, close } = await listen((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(
        `data: ${JSON.stringify({ id: 'x', object: 'chat.completion.chunk', created: 0, model: 'm', choices: [{ index: 0, delta: { content: 'Hel' } }] })}\n\n`,
      );
    });
    const tokens: string[] = [];
    const error = await new OpenAIChatModel({ baseURL: url, timeoutMs: 300 })
      .complete(request((delta) => void tokens.push(delta)))
      .catch((e: unknown) => e);
    await close();
    expect(error).toBeInstanceOf(APIConnectionTimeoutError);
    expect(tokens).toEqual(['Hel']);
  });

  it("fails a call answered with a status outside HTTP's range, without harming the process", async () => {
    const { url, close } = await listen((_req, res) => {
      res.writeHead(999);
      res.end('{}');
    });
    const error = await new OpenAIChatModel({ baseURL: url, timeoutMs: 5_000 }).complete(request()).catch((e: unknown) => e);
    await close();
    expect(error).toBeInstanceOf(APIConnectionError);
  });

  it('reports an endpoint that cannot be reached as a connection error', async () => {
    const { url, close } = await listen(() => undefined);
    await close(); // nothing listens on that port any more
    const error = await new OpenAIChatModel({ baseURL: url, timeoutMs: 5_000 }).complete(request()).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(APIConnectionError);
  });
});

async function listen(handler: http.RequestListener): Promise<{ url: string; close: () => Promise<void> }> {
  const server = http.createServer(handler);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    close: () =>
      new Promise((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
