import OpenAI, { toFile } from 'openai';
import type { Config, DownloadedMedia } from '@assistant/shared';

/** Voice to text through `{OPENAI_BASE_URL}/audio/transcriptions` with TRANSCRIPTION_MODEL. */
export class Transcriber {
  private readonly client: OpenAI;
  private readonly model: string;
  private readonly timeoutMs: number;

  constructor(config: Config) {
    this.timeoutMs = config.MODEL_TIMEOUT_MS;
    this.client = new OpenAI({
      // Local OpenAI-compatible servers often need no key, but the SDK insists on one.
      apiKey: config.OPENAI_API_KEY ?? 'not-needed',
      ...(config.OPENAI_BASE_URL ? { baseURL: config.OPENAI_BASE_URL } : {}),
      timeout: config.MODEL_TIMEOUT_MS,
      // Retries belong to the job, whose backoff frees the worker slot in between.
      maxRetries: 0,
    });
    this.model = config.TRANSCRIPTION_MODEL;
  }

  async transcribe(audio: DownloadedMedia): Promise<string> {
    const file = await toFile(audio.data, audio.fileName, { type: audio.mimeType });
    // The SDK's timeout ends once the headers arrive: a server that stops sending in mid-body would
    // hold the job (and a deliveries slot) for good. This signal bounds the whole call.
    const signal = AbortSignal.timeout(this.timeoutMs);
    const result = await this.client.audio.transcriptions.create({ file, model: this.model }, { signal });
    return result.text;
  }
}
