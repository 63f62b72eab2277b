import { telegramGroupText, telegramGroupUpgrade } from '../../../../../tests/helpers/telegram-updates';
import { groupUpgrade } from './group-upgrades';
import { telegramInbound } from './telegram.inbound';
import { telegramUpdate } from './telegram.schemas';

describe('groupUpgrade', () => {
  const [group, supergroup, member] = [-4962287234, -1002855950299, 5550002];

  it('reads the upgrade from either service message, the same from both', () => {
    const movedTo = telegramUpdate.parse(telegramGroupUpgrade(group, member, { migrate_to_chat_id: supergroup }, 1));
    const movedFrom = telegramUpdate.parse(telegramGroupUpgrade(supergroup, member, { migrate_from_chat_id: group }, 2));
    const upgrade = { group: String(group), supergroup: String(supergroup) };
    expect(groupUpgrade(movedTo)).toEqual(upgrade);
    expect(groupUpgrade(movedFrom)).toEqual(upgrade);
  });

  it('finds none in an ordinary message, and the service messages are not for the assistant to answer', async () => {
    expect(groupUpgrade(telegramUpdate.parse(telegramGroupText(group, member, 'hi', 3)))).toBeUndefined();
    const movedTo = telegramUpdate.parse(telegramGroupUpgrade(group, member, { migrate_to_chat_id: supergroup }, 4));
    expect(await telegramInbound(movedTo, { id: '7000000001', username: async () => 'nexo_assistant_bot' })).toBeUndefined();
  });
});
