import { publishing, type Publishing } from '../../../../tests/helpers/publishing';
import { DeliveryLines } from './delivery-line';

let p: Publishing;
let lines: DeliveryLines;

beforeAll(() => {
  p = publishing('delivery-line');
  lines = new DeliveryLines(p.redis, p.queues.deliveries, p.prefix);
});

afterAll(async () => {
  await p.close();
});

const tg = (chat: string) => ({ channel: 'telegram' as const, chat_id: chat });
const queued = (id: string) => p.queues.deliveries.add('reply', { to: { channel: 'telegram', chat_id: '1' }, text: 'hi' }, { jobId: id });

describe('DeliveryLines', () => {
  it('puts a delivery behind an earlier one of its chat that waits, and no other chat', async () => {
    const [first, second] = [await queued('reply.first'), await queued('reply.second')];
    await lines.join(tg('1'), first);

    expect(await lines.behind(tg('1'), second)).toBe(true);
    expect(await lines.behind(tg('1'), first)).toBe(false);
    expect(await lines.behind(tg('2'), second)).toBe(false);
  });

  it('drops from the line a delivery whose job is gone (its user erased)', async () => {
    const [gone, next] = [await queued('reply.gone'), await queued('reply.next')];
    await lines.join(tg('3'), gone);
    await gone.remove();

    expect(await lines.behind(tg('3'), next)).toBe(false);
    expect(await p.redis.zcard(`${p.prefix}:delivery-line:telegram:3`)).toBe(0);
  });

  it("runs one gateway's work for a chat one at a time, in the order it came", async () => {
    const order: string[] = [];
    let release = () => undefined as void;
    const held = new Promise<void>((resolve) => (release = resolve));
    const slow = lines.alone(tg('4'), async () => {
      await held;
      order.push('slow');
    });
    const quick = lines.alone(tg('4'), async () => order.push('quick'));
    const elsewhere = lines.alone(tg('5'), async () => order.push('elsewhere'));
    await elsewhere;
    release();
    await Promise.all([slow, quick]);

    expect(order).toEqual(['elsewhere', 'slow', 'quick']);
  });
});
