import type pg from 'pg';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { testDb } from './helpers/db';
import { FakeModel, userText } from '../scripts/lib/fake-model';
import { FakeTelegram } from './helpers/fake-telegram';
import { TestSystem } from '../scripts/lib/system';

/**
 * Outbound deliveries when a gateway dies mid-send (docs/channels.md#delivery): a part the provider
 * may have taken is not sent again by the gateway that takes the job over.
 */
const model = new FakeModel();
const telegram = new FakeTelegram();
const system = new TestSystem();
const TG_SECRET = 'tg-delivery-crash-secret';
const webhooks = new ChannelWebhooks(() => system.url, TG_SECRET, 'no-whatsapp-here');
let db: pg.Pool;

beforeAll(async () => {
  await Promise.all([model.start(), telegram.start()]);
  model.script = (body) => ({ content: `echo: ${userText(body)}` });
  db = testDb();
  await system.start({
    env: {
      OPENAI_BASE_URL: model.url,
      TRANSCRIPTION_MODEL: 'whisper-test',
      // A killed gateway's job is taken over sooner: the voice note below kills several in a row.
      JOB_LOCK_MS: '2000',
      TELEGRAM_BOT_TOKEN: '123456:delivery-crash',
      TELEGRAM_WEBHOOK_SECRET: TG_SECRET,
      TELEGRAM_API_BASE_URL: telegram.url,
      TELEGRAM_BOT_USERNAME: telegram.bot.username,
    },
  });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), telegram.stop()]);
  await db.end();
});

const texts = (chat: number) => telegram.received(chat).map((call) => String(call.body.text));

it('sends a part once when its gateway is killed while the provider takes it', async () => {
  const chat = webhooks.nextId();
  const held = telegram.hold(chat);
  expect((await webhooks.postTelegram(webhooks.tgText(chat, 'first'))).status).toBe(200);
  await held.arrived;
  await system.signal('gateway', 'SIGKILL');
  // Telegram takes the message though the gateway that sent it is gone.
  held.release();
  system.spawn('gateway');
  await system.waitReady();
  expect((await webhooks.postTelegram(webhooks.tgText(chat, 'second'))).status).toBe(200);
  // The chat's line keeps 'second' behind 'first': once it arrives, the first delivery has ended.
  await system.waitFor(() => texts(chat).includes('echo: second'), 'the second answer');
  expect(texts(chat)).toEqual(['echo: first', 'echo: second']);
});

it('apologises for a voice note whose transcription kills its gateway every time, and the session goes on', async () => {
  const chat = webhooks.nextId();
  const audio = 'audio that kills the gateway';
  let calls = 0;
  // Never answered: each gateway that transcribes it is killed mid-call.
  model.transcribe = (request) => (request.audio === audio ? (calls++, new Promise(() => undefined)) : { text: request.audio });
  telegram.addFile('voice-killer', 'voice/killer.oga', audio);
  expect((await webhooks.postTelegram(webhooks.tgVoice(chat, 'voice-killer'))).status).toBe(200);
  expect((await webhooks.postTelegram(webhooks.tgText(chat, 'typed after it'))).status).toBe(200);

  const apologised = () => texts(chat).some((text) => text.includes('could not make out that voice note'));
  for (let killed = 0; !apologised(); killed++) {
    // BullMQ fails a job for good after it stalled more than maxStalledCount (5) times, without running it.
    expect(killed).toBeLessThan(8);
    await system.waitFor(() => calls > killed || apologised(), 'the transcription call or the apology');
    if (apologised()) break;
    await system.signal('gateway', 'SIGKILL');
    system.spawn('gateway');
    await system.waitReady();
  }
  await system.waitFor(() => texts(chat).includes('echo: typed after it'), 'the answer to the text');
});

it('sends a part whose send failed while the database would not drop its record either', async () => {
  const chat = webhooks.nextId();
  telegram.failSend(chat, 502, { ok: false, error_code: 502, description: 'Bad Gateway' });
  // The record of the part that failed cannot be dropped, once.
  await db.query(`
    CREATE SEQUENCE IF NOT EXISTS test_undroppable_${chat};
    CREATE OR REPLACE FUNCTION test_undroppable_${chat}() RETURNS trigger AS $$
    BEGIN
      IF OLD.recipient = '${chat}' AND nextval('test_undroppable_${chat}') = 1 THEN RAISE EXCEPTION 'the database is failing'; END IF;
      RETURN OLD;
    END $$ LANGUAGE plpgsql;
    CREATE TRIGGER test_undroppable_${chat} BEFORE DELETE ON deliveries FOR EACH ROW EXECUTE FUNCTION test_undroppable_${chat}();`);
  try {
    expect((await webhooks.postTelegram(webhooks.tgText(chat, 'once more'))).status).toBe(200);
    await system.waitFor(() => texts(chat).includes('echo: once more'), 'the answer, sent on a retry');
  } finally {
    await db.query(`DROP TRIGGER test_undroppable_${chat} ON deliveries; DROP SEQUENCE test_undroppable_${chat}`);
  }
});
