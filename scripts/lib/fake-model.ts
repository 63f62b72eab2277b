import http from 'node:http';
import { LocalHttpServer } from './local-http-server';

export interface FakeToolCall {
  name: string;
  arguments: Record<string, unknown> | string;
  id?: string;
}

export interface FakeReply {
  content?: string;
  toolCalls?: FakeToolCall[];
  /** Characters per streamed content chunk. */
  chunkSize?: number;
  /** Waits this long before answering. */
  delayMs?: number;
  /** Answers with this HTTP status and an error body instead. */
  status?: number;
}

export interface ChatRequestBody {
  model: string;
  messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
}

export type Script = (body: ChatRequestBody, index: number) => FakeReply | Promise<FakeReply>;

/**
 * A local OpenAI-compatible Chat Completions server: the real `openai` SDK talks to it, so the
 * streaming and tool-call code paths are exercised. Every raw request body is recorded.
 */
export class FakeModel extends LocalHttpServer {
  readonly requests: { raw: string; body: ChatRequestBody; startedAt: number; endedAt?: number }[] = [];
  script: Script = () => ({ content: 'ok' });
  get url(): string {
    return `${this.baseUrl}/v1`;
  }

  protected async handle(_req: http.IncomingMessage, raw: string, res: http.ServerResponse): Promise<void> {
    const body = JSON.parse(raw) as ChatRequestBody;
    const index = this.requests.length;
    const record: (typeof this.requests)[number] = { raw, body, startedAt: Date.now() };
    this.requests.push(record);
    let reply: FakeReply;
    try {
      reply = await this.script(body, index);
    } catch (error) {
      reply = { status: 500, content: String(error) };
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.status) {
      res.writeHead(reply.status, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: reply.content ?? 'fake error', type: 'fake' } }));
      record.endedAt = Date.now();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({
          id: `chatcmpl-${index}`,
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          choices: [{ index: 0, delta, finish_reason: finish }],
        })}\n\n`,
      );
    chunk({ role: 'assistant', content: '' });
    const content = reply.content ?? '';
    const size = reply.chunkSize ?? 4;
    for (let i = 0; i < content.length; i += size) chunk({ content: content.slice(i, i + size) });
    (reply.toolCalls ?? []).forEach((call, i) => {
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      chunk({ tool_calls: [{ index: i, id: call.id ?? `call_${index}_${i}`, type: 'function', function: { name: call.name, arguments: '' } }] });
      // Arguments arrive in pieces, as real models send them.
      const half = Math.ceil(args.length / 2);
      chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(0, half) } }] });
      chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] });
    });
    chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop');
    res.end('data: [DONE]\n\n');
    record.endedAt = Date.now();
  }
}

/** The last message of a request, and whether it is the user's (a new turn) or tool results. */
export function lastMessage(body: ChatRequestBody) {
  return body.messages[body.messages.length - 1] ?? { role: 'none', content: '' };
}

/** The text of the turn's user message (the last user message of the request). */
export function userText(body: ChatRequestBody): string {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i];
    if (message?.role === 'user') return String(message.content);
  }
  return '';
}

/** Routes each request to the script whose key starts the turn's user message. */
export function byUserText(routes: Record<string, Script>): Script {
  return (body, index) => {
    const text = userText(body);
    const key = Object.keys(routes).find((prefix) => text.startsWith(prefix));
    if (!key) return { content: `no script for "${text}"` };
    return (routes[key] as Script)(body, index);
  };
}

/** True when the request carries tool results after the turn's user message (a follow-up step). */
export function afterTools(body: ChatRequestBody): boolean {
  return lastMessage(body).role === 'tool';
}
