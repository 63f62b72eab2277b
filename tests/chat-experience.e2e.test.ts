import { randomUUID } from 'node:crypto';
import type pg from 'pg';
import { fixture, telegramPhoto, telegramPrivateText, whatsappText } from './helpers/channel-fixtures';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeGraph } from './helpers/fake-graph';
import { FakeModel, userImages, userText, type TranscriptionAnswer } from '../scripts/lib/fake-model';
import { FakeTelegram } from './helpers/fake-telegram';
import { TestSystem } from '../scripts/lib/system';

/**
 * A chat that feels alive (docs/channels.md): typing indicators, Markdown as Telegram HTML and
 * WhatsApp markup, long answers split at boundaries, voice notes transcribed and photos shown
 * to the model, through the real processes, the real `openai` SDK and local fake providers.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const graph = new FakeGraph();
const system = new TestSystem();
let db: pg.Pool;

const TG_SECRET = 'tg-secret-chat';
const TG_TOKEN = '424242:chat-token';
const WA_APP_SECRET = 'wa-app-secret-chat';
const PHONE_ID = whatsappText.entry[0]?.changes[0]?.value.metadata.phone_number_id as string;
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, WA_APP_SECRET);

const MARKDOWN =
  '**Price** < 5 & > 2\n\n```js\nif (a < b && c > d) run();\n```\n\nSee [the docs](https://example.com/a?b=1&c=2) and `x<y>`.';
const MARKDOWN_HTML =
  '<b>Price</b> &lt; 5 &amp; &gt; 2\n\n<pre><code class="language-js">if (a &lt; b &amp;&amp; c &gt; d) run();</code></pre>\n\n' +
  'See <a href="https://example.com/a?b=1&amp;c=2">the docs</a> and <code>x&lt;y&gt;</code>.';
/** About 9,000 characters: paragraphs of words around a code block that must stay whole. */
const sentence = (tag: string, n: number) => Array.from({ length: n }, (_, i) => `${tag}${i}`).join(' ');
const PARAGRAPHS = Array.from({ length: 12 }, (_, i) => sentence(`p${i}w`, 110));
const CODE = Array.from({ length: 40 }, (_, i) => `let value${i} = compute(${i});`).join('\n');
const NINE_THOUSAND = [...PARAGRAPHS.slice(0, 6), '```\n' + CODE + '\n```', ...PARAGRAPHS.slice(6)].join('\n\n');

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start(), graph.start()]);
  graph.token = 'wa-token-chat';
  model.script = (body) => {
    const text = userText(body);
    if (text.startsWith('slow')) return { content: `done: ${text}`, delayMs: 2_000 };
    if (text === 'markdown please') return { content: MARKDOWN };
    if (text === 'nine thousand') return { content: NINE_THOUSAND, chunkSize: 1_000 };
    return { content: `echo: ${text}` };
  };
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TRANSCRIPTION_MODEL: 'whisper-test',
      VISION: 'true',
      TYPING_INTERVAL_MS: '300',
      TELEGRAM_BOT_TOKEN: TG_TOKEN,
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
      WHATSAPP_ACCESS_TOKEN: graph.token,
      WHATSAPP_APP_SECRET: WA_APP_SECRET,
      WHATSAPP_VERIFY_TOKEN: 'verify',
      WHATSAPP_PHONE_NUMBER_ID: PHONE_ID,
      WHATSAPP_API_BASE_URL: graph.url,
    },
  });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), telegram.stop(), graph.stop()]);
  await db.end();
});

const tgVoice = (chat: number, fileId: string) => webhooks.tgVoice(chat, fileId);

function waMedia(from: string, type: 'audio' | 'image', media: Record<string, unknown>, id = `wamid.${randomUUID()}`): string {
  const payload = JSON.parse(webhooks.waText(from, 'x', id));
  const message = payload.entry[0].changes[0].value.messages[0];
  delete message.text;
  Object.assign(message, { type, [type]: media });
  return JSON.stringify(payload);
}

const userMessagesOf = async (channel: string, externalId: string) =>
  (
    await db.query<{ content: string }>(
      `SELECT m.content FROM messages m JOIN turns t ON t.id = m.turn_id
       JOIN channel_identities i ON i.user_id = t.user_id
       WHERE i.channel = $1 AND i.external_id = $2 AND m.role = 'user' ORDER BY m.id`,
      [channel, externalId],
    )
  ).rows.map((row) => row.content);

describe('typing indicators', () => {
  it('Telegram shows typing while a slow model call runs, and never after the answer', async () => {
    const chat = webhooks.nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'slow one'))).status).toBe(200);
    const answer = await system.waitFor(() => telegram.received(chat)[0], 'the answer');
    expect(answer.body.text).toBe('done: slow one');
    const typing = telegram.callsTo('sendChatAction', chat);
    // Every 300 ms during a 2 s model call: several, all before the answer.
    expect(typing.length).toBeGreaterThanOrEqual(3);
    expect(typing.every((call) => call.body.action === 'typing' && call.at <= answer.at)).toBe(true);

    // Another chat's slow turn spans many beats of the ticker: the first chat gets none of them.
    const other = webhooks.nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(other, 'slow two'))).status).toBe(200);
    await system.waitFor(() => telegram.received(other).length === 1, 'the other answer');
    expect(telegram.callsTo('sendChatAction', other).length).toBeGreaterThanOrEqual(3);
    expect(telegram.callsTo('sendChatAction', chat)).toHaveLength(typing.length);
  });

  it('WhatsApp marks the message read with a typing indicator when its turn starts', async () => {
    const waId = `55119${webhooks.nextId()}`;
    const id = `wamid.${randomUUID()}`;
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'slow zap', id))).status).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    const receipts = graph.readReceipts().filter((request) => request.body.message_id === id);
    expect(receipts).toHaveLength(1);
    expect(receipts[0]?.body).toEqual({
      messaging_product: 'whatsapp',
      status: 'read',
      message_id: id,
      typing_indicator: { type: 'text' },
    });
    expect(receipts[0]?.path).toBe(`/${PHONE_ID}/messages`);
    expect(receipts[0]?.at).toBeLessThanOrEqual(graph.received(waId)[0]?.at ?? 0);
  });
});

describe('formatting', () => {
  it('sends a Markdown answer with <, >, &, code and a link as valid Telegram HTML', async () => {
    const chat = webhooks.nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'markdown please'))).status).toBe(200);
    const sent = await system.waitFor(() => telegram.received(chat)[0], 'the answer');
    expect(sent.body.parse_mode).toBe('HTML');
    expect(sent.body.text).toBe(MARKDOWN_HTML);
  });

  // The second: HTML around no text at all (a link without words), which Telegram calls empty.
  it.each(['Bad Request: can\'t parse entities: Unsupported start tag "b" at byte offset 0', 'Bad Request: message text is empty'])(
    'resends a part as plain text, once, when Telegram refuses its HTML: %s',
    async (description) => {
      const chat = webhooks.nextId();
      const refusal = { ok: false, error_code: 400, description };
      telegram.failSend(chat, 400, refusal);
      expect((await webhooks.postTelegram(webhooks.tgText(chat, 'markdown please'))).status).toBe(200);
      await system.waitFor(() => telegram.received(chat).length === 1, 'the plain resend');
      const [refused, plain] = telegram.sendAttempts(chat);
      expect(refused).toMatchObject({ status: 400, body: { parse_mode: 'HTML', text: MARKDOWN_HTML } });
      expect(plain?.body.parse_mode).toBeUndefined();
      expect(plain?.body.text).toBe(
        'Price < 5 & > 2\n\nif (a < b && c > d) run();\n\nSee the docs (https://example.com/a?b=1&c=2) and x<y>.',
      );
      // A later answer is the barrier: the part was not sent a third time.
      expect((await webhooks.postTelegram(webhooks.tgText(chat, 'after'))).status).toBe(200);
      await system.waitFor(() => telegram.received(chat).length === 2, 'the barrier answer');
      expect(telegram.sendAttempts(chat)).toHaveLength(3);
    },
  );

  it('sends WhatsApp its own markup', async () => {
    const waId = `55119${webhooks.nextId()}`;
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'markdown please'))).status).toBe(200);
    const reply = await system.waitFor(() => graph.received(waId)[0], 'the reply');
    expect(reply.body.text.body).toBe(
      '*Price* < 5 & > 2\n\n```\nif (a < b && c > d) run();\n```\n\nSee the docs (https://example.com/a?b=1&c=2) and `x<y>`.',
    );
  });

  it('splits a 9,000-character answer between paragraphs, keeping the code block whole', async () => {
    expect(NINE_THOUSAND.length).toBeGreaterThan(9_000);
    const chat = webhooks.nextId();
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'nine thousand'))).status).toBe(200);
    // Parts go out in order: the closing paragraph arrives last.
    await system.waitFor(
      () => telegram.received(chat).some((call) => String(call.body.text).endsWith(PARAGRAPHS[11] ?? '')),
      'the last part',
    );
    const parts = telegram.received(chat).map((call) => String(call.body.text));
    for (const part of parts) expect(part.length).toBeLessThan(4_096);
    const codeHtml = `<pre><code>${CODE}</code></pre>`;
    expect(parts.filter((part) => part.includes(codeHtml))).toHaveLength(1);
    expect(parts.join('\n\n')).toBe([...PARAGRAPHS.slice(0, 6), codeHtml, ...PARAGRAPHS.slice(6)].join('\n\n'));
  });
});

describe('voice notes', () => {
  it('transcribes a Telegram voice note and answers it; the transcript is the user message', async () => {
    const chat = webhooks.nextId();
    telegram.addFile('voice-tg-1', 'voice/file_1.oga', 'hello from my voice');
    expect((await webhooks.postTelegram(tgVoice(chat, 'voice-tg-1'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer');
    expect(telegram.received(chat)[0]?.body.text).toBe('echo: hello from my voice');
    const download = telegram.calls.find((call) => call.method === 'download' && call.body.path === 'voice/file_1.oga');
    expect(download?.token).toBe(TG_TOKEN);
    expect(model.transcriptions.find((request) => request.audio === 'hello from my voice')).toMatchObject({
      model: 'whisper-test',
      fileName: 'media.ogg',
    });
    expect(await userMessagesOf('telegram', String(chat))).toEqual(['hello from my voice']);
  });

  it('transcribes a WhatsApp audio message, fetched with the access token, and answers it', async () => {
    const waId = `55119${webhooks.nextId()}`;
    graph.addMedia('media-audio-1', 'audio/ogg', 'olá pela voz');
    expect(
      (await webhooks.postWhatsApp(waMedia(waId, 'audio', { id: 'media-audio-1', mime_type: 'audio/ogg; codecs=opus', voice: true })))
        .status,
    ).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    expect(graph.received(waId)[0]?.body.text.body).toBe('echo: olá pela voz');
    const fetched = graph.requests.filter((request) => request.path.includes('media-audio-1'));
    expect(fetched.map((request) => [request.status, request.authorization])).toEqual([
      [200, `Bearer ${graph.token}`],
      [200, `Bearer ${graph.token}`],
    ]);
    expect(await userMessagesOf('whatsapp', waId)).toEqual(['olá pela voz']);
  });

  it('retries a failed transcription, and apologises when it cannot succeed', async () => {
    const chat = webhooks.nextId();
    let failures = 0;
    model.transcribe = (request) => {
      if (request.audio === 'flaky audio' && failures++ < 2) return { status: 503 };
      if (request.audio === 'broken audio') return { status: 400 };
      return { text: request.audio };
    };
    telegram.addFile('voice-flaky', 'voice/flaky.oga', 'flaky audio');
    expect((await webhooks.postTelegram(tgVoice(chat, 'voice-flaky'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer after retries');
    expect(telegram.received(chat)[0]?.body.text).toBe('echo: flaky audio');
    expect(model.transcriptions.filter((request) => request.audio === 'flaky audio')).toHaveLength(3);

    telegram.addFile('voice-broken', 'voice/broken.oga', 'broken audio');
    expect((await webhooks.postTelegram(tgVoice(chat, 'voice-broken'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the apology');
    expect(telegram.received(chat)[1]?.body.text).toContain('could not make out that voice note');
  });
});

describe('a voice note keeps its place in its session', () => {
  /** Holds the transcription of `audio` until the returned function is called; then answers `answer`, or the audio as its text. */
  function holdTranscription(audio: string, answer?: TranscriptionAnswer): () => void {
    let release = () => {};
    const released = new Promise<void>((resolve) => (release = resolve));
    const previous = model.transcribe;
    model.transcribe = async (request) => {
      if (request.audio !== audio) return previous(request);
      await released;
      return answer ?? { text: audio };
    };
    return release;
  }
  /** The user messages of the model request whose last user message is `text`. */
  const userMessagesSeenWith = (text: string) => {
    const request = model.requests.find((r) => userText(r.body) === text);
    return request?.body.messages.filter((message) => message.role === 'user').map((message) => message.content);
  };

  it('a text sent while a voice note is transcribed is answered after it: one turn, the transcript first', async () => {
    const chat = webhooks.nextId();
    const release = holdTranscription('first the voice');
    telegram.addFile('voice-order', 'voice/order.oga', 'first the voice');
    expect((await webhooks.postTelegram(tgVoice(chat, 'voice-order'))).status).toBe(200);
    await system.waitFor(() => model.transcriptions.some((request) => request.audio === 'first the voice'), 'the transcription request');
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'then the text'))).status).toBe(200);
    release();

    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer');
    expect(telegram.received(chat)[0]?.body.text).toBe('echo: then the text');
    expect(userMessagesSeenWith('then the text')?.slice(-2)).toEqual(['first the voice', 'then the text']);
    expect(await userMessagesOf('telegram', String(chat))).toEqual(['first the voice', 'then the text']);
  });

  it('a WhatsApp voice note that cannot be heard gives way: the apology, and the text sent after it is answered alone', async () => {
    const waId = `55119${webhooks.nextId()}`;
    const release = holdTranscription('unheard voice', { status: 400 });
    graph.addMedia('media-unheard', 'audio/ogg', 'unheard voice');
    expect((await webhooks.postWhatsApp(waMedia(waId, 'audio', { id: 'media-unheard', mime_type: 'audio/ogg', voice: true }))).status).toBe(
      200,
    );
    await system.waitFor(() => model.transcriptions.some((request) => request.audio === 'unheard voice'), 'the transcription request');
    expect((await webhooks.postWhatsApp(webhooks.waText(waId, 'text after the voice'))).status).toBe(200);
    release();

    await system.waitFor(() => graph.received(waId).length === 2, 'the apology and the answer');
    const texts = graph.received(waId).map((message) => message.body.text.body);
    expect(texts).toContain('echo: text after the voice');
    expect(texts.some((text) => text.includes('could not make out that voice note'))).toBe(true);
    expect(await userMessagesOf('whatsapp', waId)).toEqual(['text after the voice']);
  });

  it('a voice note alone that cannot be heard ends its turn without a model call, and the session goes on', async () => {
    const chat = webhooks.nextId();
    const previous = model.transcribe;
    model.transcribe = (request) => (request.audio === 'lone unheard voice' ? { status: 400 } : previous(request));
    telegram.addFile('voice-lone', 'voice/lone.oga', 'lone unheard voice');
    expect((await webhooks.postTelegram(tgVoice(chat, 'voice-lone'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the apology');
    expect(telegram.received(chat)[0]?.body.text).toContain('could not make out that voice note');
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'still there?'))).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 2, 'the answer');
    expect(telegram.received(chat)[1]?.body.text).toBe('echo: still there?');
    expect(await userMessagesOf('telegram', String(chat))).toEqual(['still there?']);
  });

  it('a voice note whose user an admin disables while it waits is not transcribed again: the chat is told the account is disabled', async () => {
    const chat = webhooks.nextId();
    const audio = 'voice of a user disabled meanwhile';
    const release = holdTranscription(audio, { status: 500 });
    telegram.addFile('voice-disabled', 'voice/disabled.oga', audio);
    expect((await webhooks.postTelegram(tgVoice(chat, 'voice-disabled'))).status).toBe(200);
    await system.waitFor(() => model.transcriptions.some((request) => request.audio === audio), 'the transcription request');
    const identity = await db.query<{ user_id: string }>(
      `SELECT user_id FROM channel_identities WHERE channel = 'telegram' AND external_id = $1`,
      [String(chat)],
    );
    const disabled = await fetch(`${system.url}/v1/admin/users/${identity.rows[0]?.user_id}`, {
      method: 'PATCH',
      headers: { authorization: `Bearer ${system.adminToken}`, 'content-type': 'application/json' },
      body: JSON.stringify({ disabled: true }),
    });
    expect(disabled.status).toBe(200);
    // The attempt under way fails; the retry finds the user disabled and makes no call.
    release();

    await system.waitFor(() => telegram.received(chat).length === 1, 'the reply');
    expect(telegram.received(chat)[0]?.body.text).toContain('This account is disabled');
    expect(model.transcriptions.filter((request) => request.audio === audio)).toHaveLength(1);
  });
});

describe('photos with VISION=true', () => {
  it('sends the largest photo within 5 MB and its caption to the model as an image part and text', async () => {
    const chat = webhooks.nextId();
    const update = fixture(telegramPhoto);
    update.update_id = webhooks.nextId();
    const huge = { file_id: 'photo-huge', file_unique_id: 'uh', file_size: 6_000_000, width: 4000, height: 3000 };
    Object.assign(update.message, {
      from: { ...update.message.from, id: chat },
      chat: { ...update.message.chat, id: chat },
      photo: [...update.message.photo, huge],
    });
    const chosen = update.message.photo[1]?.file_id as string;
    telegram.addFile(chosen, 'photos/file_9.jpg', 'JPEG-BYTES');
    expect((await webhooks.postTelegram(update)).status).toBe(200);
    await system.waitFor(() => telegram.received(chat).length === 1, 'the answer');
    expect(telegram.received(chat)[0]?.body.text).toBe('echo: [photo] olha isso');
    const request = model.requests.find((r) => userText(r.body) === '[photo] olha isso');
    expect(request && userImages(request.body)).toEqual([`data:image/jpeg;base64,${Buffer.from('JPEG-BYTES').toString('base64')}`]);
    expect(telegram.calls.some((call) => call.method === 'getFile' && call.body.file_id === 'photo-huge')).toBe(false);
  });

  it('does the same for a WhatsApp image, fetched with the access token', async () => {
    const waId = `55119${webhooks.nextId()}`;
    graph.addMedia('media-image-1', 'image/png', 'PNG-BYTES');
    expect(
      (await webhooks.postWhatsApp(waMedia(waId, 'image', { id: 'media-image-1', mime_type: 'image/png', caption: 'recibo' }))).status,
    ).toBe(200);
    await system.waitFor(() => graph.received(waId).length === 1, 'the reply');
    expect(graph.received(waId)[0]?.body.text.body).toBe('echo: [photo] recibo');
    const request = model.requests.find((r) => userText(r.body) === '[photo] recibo');
    expect(request && userImages(request.body)).toEqual([`data:image/png;base64,${Buffer.from('PNG-BYTES').toString('base64')}`]);
  });

  it('answers a sticker with the short reply, which does not tell the person that photos cannot be read', async () => {
    const chat = webhooks.nextId();
    const { text: _text, ...message } = fixture(telegramPrivateText).message;
    const sticker = { file_id: 'sticker-1', file_unique_id: 's1', type: 'regular', width: 512, height: 512 };
    const update = {
      update_id: webhooks.nextId(),
      message: { ...message, from: { ...message.from, id: chat }, chat: { ...message.chat, id: chat }, sticker },
    };
    expect((await webhooks.postTelegram(update)).status).toBe(200);
    const reply = await system.waitFor(() => telegram.received(chat)[0], 'the reply');
    expect(reply.body.text).toContain('I can only read text messages, photos and voice notes');
    expect(reply.body.text).not.toContain('not photos');
  });
});

describe('voice with the offline planner', () => {
  const offline = new TestSystem();
  const offlineHooks = new ChannelWebhooks(() => offline.url, TG_SECRET, WA_APP_SECRET);

  beforeAll(async () => {
    // The reply comes from the gateway alone: no worker is needed.
    await offline.start({
      services: ['gateway'],
      env: {
        LLM_PROVIDER: 'offline',
        TELEGRAM_BOT_TOKEN: TG_TOKEN,
        TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
        TELEGRAM_API_BASE_URL: telegram.url,
      },
    });
  });
  afterAll(() => offline.stop());

  it('answers that voice needs a model endpoint', async () => {
    const chat = offlineHooks.nextId() + 900_000;
    const before = model.transcriptions.length;
    expect((await offlineHooks.postTelegram(tgVoice(chat, 'voice-offline'))).status).toBe(200);
    await offline.waitFor(() => telegram.received(chat).length === 1, 'the explanation');
    expect(telegram.received(chat)[0]?.body.text).toContain('Voice notes need a model endpoint');
    expect(model.transcriptions.length).toBe(before);
  });
});
