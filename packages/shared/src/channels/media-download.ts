import { z } from 'zod';
import type { Config } from '../env';

/** A file a person sent on a channel, by the provider's reference: what jobs and rows keep instead of the bytes. */
export const mediaRefSchema = z.discriminatedUnion('channel', [
  z.object({ channel: z.literal('telegram'), file_id: z.string().min(1) }),
  z.object({ channel: z.literal('whatsapp'), media_id: z.string().min(1) }),
]);
export type MediaRef = z.infer<typeof mediaRefSchema>;

/** Voice notes up to 20 MB, photos up to 5 MB (docs/channels.md#message-content). */
export const VOICE_MAX_BYTES = 20 * 1024 * 1024;
export const PHOTO_MAX_BYTES = 5 * 1024 * 1024;
/** Each request of a download (its metadata, then its bytes). */
export const MEDIA_REQUEST_TIMEOUT_MS = 30_000;

export interface DownloadedMedia {
  data: Buffer;
  mimeType: string;
  /** A name whose extension says the format (transcription endpoints go by it). */
  fileName: string;
}

/** A download that failed; `permanent` when no retry can fix it (too large, refused, unknown file). */
export class MediaDownloadError extends Error {
  constructor(
    message: string,
    readonly permanent: boolean,
  ) {
    super(message);
  }
}

const telegramFile = z.looseObject({
  ok: z.literal(true),
  result: z.looseObject({ file_path: z.string(), file_size: z.number().optional() }),
});
const whatsappMedia = z.looseObject({ url: z.url(), mime_type: z.string().optional(), file_size: z.coerce.number().optional() });

/**
 * Fetches a channel file with the channel's own API and token (Telegram `getFile` then
 * `/file/bot<token>/<path>`; WhatsApp `GET /<media id>` then its `url`), reading the body as a
 * stream and giving up as soon as it passes `maxBytes`. Errors never contain the token.
 */
export async function downloadMedia(config: Config, ref: MediaRef, maxBytes: number): Promise<DownloadedMedia> {
  if (ref.channel === 'telegram') {
    const token = config.TELEGRAM_BOT_TOKEN;
    if (!token) throw new MediaDownloadError('telegram is not configured', true);
    const base = config.TELEGRAM_API_BASE_URL.replace(/\/+$/, '');
    const info = await request(`${base}/bot${token}/getFile`, 'telegram getFile', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ file_id: ref.file_id }),
    });
    const file = telegramFile.safeParse(await info.json().catch(() => undefined));
    if (!file.success) throw new MediaDownloadError('telegram getFile answered an unexpected result', false);
    tooLarge(file.data.result.file_size, maxBytes);
    const path = file.data.result.file_path;
    const body = await request(`${base}/file/bot${token}/${path}`, 'telegram file download', {});
    return finish(await readCapped(body, maxBytes), body.headers.get('content-type'), path);
  }
  const token = config.WHATSAPP_ACCESS_TOKEN;
  if (!token) throw new MediaDownloadError('whatsapp is not configured', true);
  const auth = { headers: { authorization: `Bearer ${token}` } };
  const base = config.WHATSAPP_API_BASE_URL.replace(/\/+$/, '');
  const info = await request(`${base}/${encodeURIComponent(ref.media_id)}`, 'whatsapp media lookup', auth);
  const media = whatsappMedia.safeParse(await info.json().catch(() => undefined));
  if (!media.success) throw new MediaDownloadError('whatsapp media lookup answered an unexpected result', false);
  tooLarge(media.data.file_size, maxBytes);
  const body = await request(media.data.url, 'whatsapp media download', auth);
  return finish(await readCapped(body, maxBytes), media.data.mime_type ?? body.headers.get('content-type'), '');
}

async function request(url: string, what: string, init: RequestInit): Promise<Response> {
  let res: Response;
  try {
    res = await fetch(url, { ...init, signal: AbortSignal.timeout(MEDIA_REQUEST_TIMEOUT_MS) });
  } catch {
    throw new MediaDownloadError(`${what} did not answer`, false);
  }
  if (res.ok) return res;
  await res.body?.cancel();
  const permanent = res.status >= 400 && res.status < 500 && res.status !== 408 && res.status !== 429;
  throw new MediaDownloadError(`${what} failed: ${res.status}`, permanent);
}

function tooLarge(size: number | undefined, maxBytes: number): void {
  if (size !== undefined && size > maxBytes) throw new MediaDownloadError(`file of ${size} bytes is over the ${maxBytes}-byte limit`, true);
}

/** The body, chunk by chunk, abandoned once it passes the cap (a Content-Length can lie or be absent). */
async function readCapped(res: Response, maxBytes: number): Promise<Buffer> {
  tooLarge(Number(res.headers.get('content-length') ?? '') || undefined, maxBytes);
  const chunks: Buffer[] = [];
  let size = 0;
  const reader = res.body?.getReader() as ReadableStreamDefaultReader<Uint8Array> | undefined;
  if (!reader) return Buffer.alloc(0);
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    size += value.byteLength;
    if (size > maxBytes) {
      await reader.cancel();
      tooLarge(size, maxBytes);
    }
    chunks.push(Buffer.from(value));
  }
  return Buffer.concat(chunks);
}

const EXTENSIONS: Record<string, string> = {
  'audio/ogg': 'ogg',
  'audio/opus': 'ogg',
  'audio/mpeg': 'mp3',
  'audio/mp4': 'm4a',
  'audio/aac': 'aac',
  'audio/amr': 'amr',
  'audio/wav': 'wav',
  'audio/webm': 'webm',
  'image/jpeg': 'jpg',
  'image/png': 'png',
  'image/webp': 'webp',
};
const MIME_TYPES: Record<string, string> = {
  oga: 'audio/ogg',
  ogg: 'audio/ogg',
  mp3: 'audio/mpeg',
  m4a: 'audio/mp4',
  jpg: 'image/jpeg',
  jpeg: 'image/jpeg',
  png: 'image/png',
  webp: 'image/webp',
};

function finish(data: Buffer, contentType: string | null | undefined, path: string): DownloadedMedia {
  const fromPath = /\.(\w+)$/.exec(path)?.[1]?.toLowerCase();
  const declared = contentType?.split(';')[0]?.trim().toLowerCase();
  // Telegram serves files as application/octet-stream: the path's extension is the better witness.
  const mimeType =
    (declared && declared !== 'application/octet-stream' ? declared : undefined) ??
    (fromPath ? MIME_TYPES[fromPath] : undefined) ??
    'application/octet-stream';
  const extension = EXTENSIONS[mimeType] ?? (fromPath === 'oga' ? 'ogg' : fromPath) ?? 'bin';
  return { data, mimeType, fileName: `media.${extension}` };
}
