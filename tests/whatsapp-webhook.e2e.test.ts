import { FakeModel, userText } from '../scripts/lib/fake-model';
import { TestSystem } from '../scripts/lib/system';
import { ChannelWebhooks } from './helpers/channel-webhooks';
import { FakeGraph } from './helpers/fake-graph';

/** WhatsApp webhook bodies in the shapes and sizes Meta sends beyond a single message (docs/channels.md#webhooks). */
const model = new FakeModel();
const graph = new FakeGraph();
const system = new TestSystem();
const WA_APP_SECRET = 'wa-app-secret';

beforeAll(async () => {
  await Promise.all([model.start(), graph.start()]);
  model.script = (body) => ({ content: `echo: ${userText(body)}` });
  await system.start({ env: { OPENAI_BASE_URL: model.url, ...graph.settings(WA_APP_SECRET) } });
});

afterAll(async () => {
  if (process.env.DEBUG_LOGS) process.stdout.write(system.logs.join(''));
  await system.stop();
  await Promise.all([model.stop(), graph.stop()]);
});

const webhooks = new ChannelWebhooks(() => system.url, 'unused', WA_APP_SECRET);
const texts = (waId: string) => graph.received(waId).map((call) => call.body.text?.body);

it('answers a message in a 2 MB batch of status callbacks, as Meta sends up to 3 MB; a body over 3 MiB is 413', async () => {
  const waId = `55119${webhooks.nextId()}`;
  const payload = JSON.parse(webhooks.waText(waId, 'in a big batch'));
  const value = payload.entry[0].changes[0].value;
  const status = { status: 'delivered', timestamp: '1763800310', recipient_id: '5511987654321', conversation: { id: 'c'.repeat(32) } };
  value.statuses = Array.from({ length: 12_000 }, (_, i) => ({ id: `wamid.${String(i).padStart(60, '0')}`, ...status }));
  const raw = JSON.stringify(payload);
  expect(raw.length).toBeGreaterThan(2_000_000);
  expect((await webhooks.postWhatsApp(raw)).status).toBe(200);
  await system.waitFor(() => texts(waId).length === 1, 'the answer');
  expect(texts(waId)).toEqual(['echo: in a big batch']);

  const tooBig = await webhooks.postWhatsApp(`${raw}${' '.repeat(3 * 1024 * 1024 - raw.length + 1)}`);
  expect(tooBig.status).toBe(413);
  expect(((await tooBig.json()) as { error: { message: string } }).error.message).toBe('the request body is over 3 MiB');
});

it('reads a signed body that starts with a byte order mark, as the API reads JSON', async () => {
  const waId = `55119${webhooks.nextId()}`;
  expect((await webhooks.postWhatsApp(`\uFEFF${webhooks.waText(waId, 'after a BOM')}`)).status).toBe(200);
  await system.waitFor(() => texts(waId).length === 1, 'the answer');
  expect(texts(waId)).toEqual(['echo: after a BOM']);
});

it('answers the messages of a batch that has parts of a shape it does not know, with 200, and leaves those out', async () => {
  const waId = `55119${webhooks.nextId()}`;
  const payload = JSON.parse(webhooks.waText(waId, 'beside a future field'));
  payload.entry[0].changes.push({ field: 'a_future_field', value: 'not an object' });
  payload.entry[0].changes[0].value.messages.push({ from: waId, id: 'wamid.odd', timestamp: '1763800299', type: 'text', text: {} });
  payload.entry.push({ id: '102290129340398', time: 1763800300 });
  expect((await webhooks.postWhatsApp(JSON.stringify(payload))).status).toBe(200);
  await system.waitFor(() => texts(waId).length === 1, 'the answer');
  expect(texts(waId)).toEqual(['echo: beside a future field']);
  await system.waitFor(() => system.logs.some((line) => line.includes('"unknownParts":3')), 'the warning');
});
