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
  /** Headers of that error answer (`retry-after`, say). */
  headers?: Record<string, string>;
  /** Cuts the connection after this many content chunks, as a network failure in mid-answer would. */
  breakAfterChunks?: number;
  /** Stops sending after this many content chunks and leaves the connection open, as a hung endpoint would. */
  stallAfterChunks?: number;
  /**
   * The usage reported when the request asks for it; by default about a token per 4 characters,
   * none cached. Null: none, as servers that ignore `stream_options` answer.
   */
  usage?: FakeUsage | null;
}

/** As OpenAI reports it in the last chunk of a stream with `stream_options.include_usage`. */
export interface FakeUsage {
  prompt_tokens: number;
  completion_tokens: number;
  cached_tokens?: number;
}

/** A user message's content may be parts: text, and images when the model is shown a photo. */
type ContentPart = { type: 'text'; text: string } | { type: 'image_url'; image_url: { url: string } };

export interface ChatRequestBody {
  model: string;
  /** `content` is typed as text; a user message with an image has parts instead (see contentText, userImages). */
  messages: { role: string; content: string | null; tool_calls?: unknown[]; tool_call_id?: string }[];
  tools?: { function: { name: string } }[];
  stream_options?: { include_usage?: boolean };
}

/** One `POST /audio/transcriptions` the fake answered: the form's model and file. */
export interface TranscriptionRequest {
  model: string;
  fileName: string;
  /** The uploaded file's bytes, read as text (test audio is ASCII). */
  audio: string;
}

/** What the fake transcribes an upload to; a status answers with that HTTP error instead. A promise holds the answer until it settles. */
export type Transcribe = (request: TranscriptionRequest) => TranscriptionAnswer | Promise<TranscriptionAnswer>;
export interface TranscriptionAnswer {
  text?: string;
  status?: number;
}

export type Script = (body: ChatRequestBody, index: number) => FakeReply | Promise<FakeReply>;

/**
 * A local OpenAI-compatible Chat Completions server: the real `openai` SDK talks to it, so the
 * streaming and tool-call code paths are exercised. Every raw request body is recorded.
 */
export interface ChatRequestRecord {
  raw: string;
  body: ChatRequestBody;
  startedAt: number;
  endedAt?: number;
  usage?: FakeUsage;
}

export class FakeModel extends LocalHttpServer {
  readonly requests: ChatRequestRecord[] = [];
  /**
   * What becomes of each chat request as it arrives: kept in `requests` for tests to read. The
   * bench replaces it, so thousands of requests do not pile up in its heap.
   */
  keep: (request: ChatRequestRecord) => void = (request) => this.requests.push(request);
  readonly transcriptions: TranscriptionRequest[] = [];
  script: Script = () => ({ content: 'ok' });
  /** By default the "audio" is its own transcript. */
  transcribe: Transcribe = (request) => ({ text: request.audio });
  get url(): string {
    return `${this.baseUrl}/v1`;
  }

  protected async handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): Promise<void> {
    if (req.url?.endsWith('/audio/transcriptions')) return this.handleTranscription(req, raw, res);
    const body = JSON.parse(raw) as ChatRequestBody;
    const index = this.requests.length;
    const record: ChatRequestRecord = { raw, body, startedAt: Date.now() };
    this.keep(record);
    let reply: FakeReply;
    try {
      reply = await this.script(body, index);
    } catch (error) {
      reply = { status: 500, content: String(error) };
    }
    if (reply.delayMs) await new Promise((resolve) => setTimeout(resolve, reply.delayMs));
    if (reply.status) {
      res.writeHead(reply.status, { ...reply.headers, 'content-type': 'application/json' });
      res.end(JSON.stringify({ error: { message: reply.content ?? 'fake error', type: 'fake' } }));
      record.endedAt = Date.now();
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream' });
    const write = (fields: Record<string, unknown>) =>
      res.write(
        `data: ${JSON.stringify({
          id: `chatcmpl-${index}`,
          object: 'chat.completion.chunk',
          created: Math.floor(Date.now() / 1000),
          model: body.model,
          ...fields,
        })}\n\n`,
      );
    const chunk = (delta: Record<string, unknown>, finish: string | null = null) =>
      write({ choices: [{ index: 0, delta, finish_reason: finish }] });
    chunk({ role: 'assistant', content: '' });
    const content = reply.content ?? '';
    const size = reply.chunkSize ?? 4;
    for (let i = 0; i < content.length; i += size) {
      if (reply.breakAfterChunks !== undefined && i / size >= reply.breakAfterChunks) {
        record.endedAt = Date.now();
        // Once what was sent has left: the client got those chunks, then loses the connection.
        res.write('', () => res.destroy());
        return;
      }
      // Nothing more is sent; the connection stays open until the client gives up (or the fake stops).
      if (reply.stallAfterChunks !== undefined && i / size >= reply.stallAfterChunks) return;
      chunk({ content: content.slice(i, i + size) });
    }
    (reply.toolCalls ?? []).forEach((call, i) => {
      const args = typeof call.arguments === 'string' ? call.arguments : JSON.stringify(call.arguments);
      chunk({
        tool_calls: [{ index: i, id: call.id ?? `call_${index}_${i}`, type: 'function', function: { name: call.name, arguments: '' } }],
      });
      // Arguments arrive in pieces, as real models send them.
      const half = Math.ceil(args.length / 2);
      chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(0, half) } }] });
      chunk({ tool_calls: [{ index: i, function: { arguments: args.slice(half) } }] });
    });
    chunk({}, reply.toolCalls?.length ? 'tool_calls' : 'stop');
    if (body.stream_options?.include_usage && reply.usage !== null) {
      const usage = reply.usage ?? {
        prompt_tokens: Math.ceil(raw.length / 4),
        completion_tokens: Math.ceil((content.length + JSON.stringify(reply.toolCalls ?? []).length) / 4),
      };
      record.usage = usage;
      // As OpenAI sends it: a last chunk with no choices.
      write({
        choices: [],
        usage: {
          prompt_tokens: usage.prompt_tokens,
          completion_tokens: usage.completion_tokens,
          total_tokens: usage.prompt_tokens + usage.completion_tokens,
          prompt_tokens_details: { cached_tokens: usage.cached_tokens ?? 0 },
        },
      });
    }
    res.end('data: [DONE]\n\n');
    record.endedAt = Date.now();
  }

  /** Multipart form as the `openai` SDK sends it: a `model` field and a `file` part. */
  private async handleTranscription(req: http.IncomingMessage, raw: string, res: http.ServerResponse): Promise<void> {
    const boundary = /boundary=(.+)$/.exec(req.headers['content-type'] ?? '')?.[1] ?? '';
    const fields = raw.split(`--${boundary}`).map((part) => {
      const [head = '', ...rest] = part.split('\r\n\r\n');
      return { head, value: rest.join('\r\n\r\n').replace(/\r\n$/, '') };
    });
    const model = fields.find((field) => field.head.includes('name="model"'))?.value ?? '';
    const file = fields.find((field) => field.head.includes('name="file"'));
    const request = { model, fileName: /filename="([^"]*)"/.exec(file?.head ?? '')?.[1] ?? '', audio: file?.value ?? '' };
    this.transcriptions.push(request);
    const answer = await this.transcribe(request);
    const status = answer.status ?? 200;
    const body = status === 200 ? { text: answer.text ?? '' } : { error: { message: 'fake transcription error', type: 'fake' } };
    res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(body));
  }
}

/** The text of a message's content, whether a string or parts. */
export function contentText(content: unknown): string {
  if (!Array.isArray(content)) return String(content);
  return (content as ContentPart[]).map((part) => (part.type === 'text' ? part.text : '')).join('');
}

/** The image URLs of a message's content. */
function imageUrls(content: unknown): string[] {
  if (!Array.isArray(content)) return [];
  return (content as ContentPart[]).flatMap((part) => (part.type === 'image_url' ? [part.image_url.url] : []));
}

/** The image URLs of a request's last user message. */
export function userImages(body: ChatRequestBody): string[] {
  return imageUrls([...body.messages].reverse().find((message) => message.role === 'user')?.content);
}

/** The user messages of a request that carry images, in order: each as [its text, its image URLs]. */
export function userMessagesWithImages(body: ChatRequestBody): [string, string[]][] {
  return body.messages.flatMap((message) => {
    const urls = message.role === 'user' ? imageUrls(message.content) : [];
    return urls.length > 0 ? [[contentText(message.content), urls] as [string, string[]]] : [];
  });
}

/**
 * The prompt as a provider caches it: tools first (they are rendered before the messages), then
 * each message. Used to measure how much of a request repeats an earlier one.
 */
function promptText(body: ChatRequestBody): string {
  return JSON.stringify(body.tools ?? []) + body.messages.map((message) => JSON.stringify(message)).join('');
}

/**
 * For each request after the first of its conversation (known by its first user message), the
 * share of its prompt that repeats the conversation's previous request as a prefix: what a
 * provider's prompt cache could serve. Keeps only each conversation's latest prompt.
 */
export class PrefixShares {
  readonly shares: number[] = [];
  private readonly previous = new Map<string, string>();

  add(body: ChatRequestBody): void {
    const key = JSON.stringify(body.messages.find((message) => message.role === 'user')?.content ?? null);
    const text = promptText(body);
    const before = this.previous.get(key);
    if (before !== undefined) this.shares.push(commonPrefixLength(text, before) / text.length);
    this.previous.set(key, text);
  }
}

const PREFIX_BLOCK = 1024;

/**
 * How many characters two strings share from the start: a block at a time (a native comparison),
 * then character by character in the block that differs. Compared one character at a time in
 * JavaScript, tens of kilobytes per request were a sixth of the load generator's CPU.
 */
function commonPrefixLength(a: string, b: string): number {
  const end = Math.min(a.length, b.length);
  let same = 0;
  while (same + PREFIX_BLOCK <= end && a.slice(same, same + PREFIX_BLOCK) === b.slice(same, same + PREFIX_BLOCK)) same += PREFIX_BLOCK;
  while (same < end && a.charCodeAt(same) === b.charCodeAt(same)) same++;
  return same;
}

/** The last message of a request, and whether it is the user's (a new turn) or tool results. */
export function lastMessage(body: ChatRequestBody) {
  return body.messages[body.messages.length - 1] ?? { role: 'none', content: '' };
}

/** The text of the turn's user message (the last user message of the request). */
export function userText(body: ChatRequestBody): string {
  for (let i = body.messages.length - 1; i >= 0; i--) {
    const message = body.messages[i];
    if (message?.role === 'user') return contentText(message.content);
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
