import http from 'node:http';
import { LocalHttpServer } from '../../scripts/lib/local-http-server';

export interface TelegramCall {
  method: string;
  token: string;
  body: any;
  /** The HTTP status the fake answered. */
  status: number;
  at: number;
}

interface Canned {
  status: number;
  body: unknown;
}

/**
 * A local Bot API server (`POST /bot<token>/<method>`): it records every call and answers like
 * Telegram, or with a canned failure queued for a chat.
 */
export class FakeTelegram extends LocalHttpServer {
  readonly calls: TelegramCall[] = [];
  readonly bot = { id: 7000000001, is_bot: true, first_name: 'Nexo', username: 'nexo_test_bot' };
  private readonly failures = new Map<string, Canned[]>();
  private readonly holds = new Map<string, { arrived: () => void; released: Promise<void>; skip: number }>();
  /** Files a bot can download (getFile, then /file/bot<token>/<path>), by file_id. */
  private readonly files = new Map<string, { path: string; data: string }>();
  /** Basic groups upgraded to a supergroup: the supergroup's id, by the old group's. */
  private readonly upgraded = new Map<string, number>();
  private messageId = 1;

  /** Makes a file (a voice note, a photo) downloadable under `file_id`. */
  addFile(fileId: string, path: string, data: string): void {
    this.files.set(fileId, { path, data });
  }

  /** Calls of one method to a chat, in order. */
  callsTo(method: string, chatId: string | number): TelegramCall[] {
    return this.calls.filter((call) => call.method === method && String(call.body.chat_id) === String(chatId));
  }

  get url(): string {
    return this.baseUrl;
  }

  /** The next `times` sendMessage calls to chatId get this answer instead of success. */
  failSend(chatId: string | number, status: number, body: unknown, times = 1): void {
    this.failures.set(
      String(chatId),
      Array.from({ length: times }, () => ({ status, body })),
    );
  }

  /**
   * The basic group `group` became `supergroup`: from now on every sendMessage and sendChatAction to
   * the old id is refused with the new one, as Telegram does.
   */
  upgradeGroup(group: number, supergroup: number): void {
    this.upgraded.set(String(group), supergroup);
  }

  /** The chat's next sendMessage is answered 429 with `retry_after`, as the Bot API does when flooded. */
  throttle(chatId: string | number, retryAfterSeconds: number): void {
    this.failSend(chatId, 429, {
      ok: false,
      error_code: 429,
      description: `Too Many Requests: retry after ${retryAfterSeconds}`,
      parameters: { retry_after: retryAfterSeconds },
    });
  }

  /**
   * The chat's next sendMessage (after `skip` others, answered at once) is answered only once
   * `release` is called (a slow provider): it is in flight from `arrived` until then.
   */
  hold(chatId: string | number, skip = 0): { arrived: Promise<void>; release: () => void } {
    let release = () => undefined as void;
    let arrived = () => undefined as void;
    const arrival = new Promise<void>((resolve) => (arrived = resolve));
    const released = new Promise<void>((resolve) => (release = resolve));
    this.holds.set(String(chatId), { arrived, released, skip });
    return { arrived: arrival, release };
  }

  /** sendMessage calls to a chat, answered or not. */
  sendAttempts(chatId: string | number): TelegramCall[] {
    return this.calls.filter((call) => call.method === 'sendMessage' && String(call.body.chat_id) === String(chatId));
  }

  /** Messages a chat actually received, in order. */
  received(chatId: string | number): TelegramCall[] {
    return this.sendAttempts(chatId).filter((call) => call.status === 200);
  }

  protected handle(req: http.IncomingMessage, raw: string, res: http.ServerResponse): void {
    const url = req.url ?? '';
    const download = /^\/file\/bot([^/]+)\/(.+)$/.exec(url);
    if (download) {
      const file = [...this.files.values()].find((candidate) => candidate.path === download[2]);
      this.calls.push({
        method: 'download',
        token: download[1] ?? '',
        body: { path: download[2] },
        status: file ? 200 : 404,
        at: Date.now(),
      });
      if (!file) return void res.writeHead(404).end();
      return void res.writeHead(200, { 'content-type': 'application/octet-stream' }).end(file.data);
    }
    const match = /^\/bot([^/]+)\/(\w+)$/.exec(url);
    const body = raw ? JSON.parse(raw) : {};
    const reply = (status: number, payload: unknown) => {
      this.calls.push({ method: match?.[2] ?? url, token: match?.[1] ?? '', body, status, at: Date.now() });
      res.writeHead(status, { 'content-type': 'application/json' }).end(JSON.stringify(payload));
    };
    if (!match) return reply(404, { ok: false, error_code: 404, description: 'Not Found' });
    const method = match[2];
    if (method === 'getMe') return reply(200, { ok: true, result: this.bot });
    const supergroup = this.upgraded.get(String(body.chat_id));
    if (supergroup !== undefined && (method === 'sendMessage' || method === 'sendChatAction')) {
      return reply(400, {
        ok: false,
        error_code: 400,
        description: 'Bad Request: group chat was upgraded to a supergroup chat',
        parameters: { migrate_to_chat_id: supergroup },
      });
    }
    if (method === 'answerCallbackQuery' || method === 'sendChatAction') return reply(200, { ok: true, result: true });
    if (method === 'getFile') {
      const file = this.files.get(String(body.file_id));
      if (!file) return reply(400, { ok: false, error_code: 400, description: 'Bad Request: invalid file_id' });
      return reply(200, {
        ok: true,
        result: { file_id: body.file_id, file_unique_id: `u${body.file_id}`, file_size: file.data.length, file_path: file.path },
      });
    }
    if (method === 'sendMessage') {
      const held = this.holds.get(String(body.chat_id));
      if (held && held.skip-- === 0) {
        this.holds.delete(String(body.chat_id));
        held.arrived();
        return void held.released.then(() => this.handle(req, raw, res));
      }
      const canned = this.failures.get(String(body.chat_id))?.shift();
      if (canned) return reply(canned.status, canned.body);
      const message = {
        message_id: this.messageId++,
        from: this.bot,
        chat: { id: body.chat_id },
        date: Math.floor(Date.now() / 1000),
        text: body.text,
      };
      return reply(200, { ok: true, result: message });
    }
    return reply(400, { ok: false, error_code: 400, description: `Bad Request: unknown method ${method}` });
  }
}
