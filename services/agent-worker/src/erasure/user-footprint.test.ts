import { concernsUser, type UserFootprint } from './user-footprint';

const id = (n: number) => `00000000-0000-4000-8000-${String(n).padStart(12, '0')}`;
const footprint: UserFootprint = {
  userId: id(1),
  turnIds: new Set([id(2)]),
  sessionIds: new Set([id(3)]),
  taskIds: new Set([id(4)]),
  approvalIds: new Set([id(5)]),
  reminderIds: new Set([id(6)]),
  channelMessageIds: new Set([id(7)]),
};

describe('concernsUser', () => {
  it.each([
    ['notify', { userId: id(1), text: 'hi' }],
    ['advance', { turnId: id(2) }],
    ['lane and digest', { sessionId: id(3) }],
    ['run-tool', { taskId: id(4), turnId: id(99) }],
    ['expire-approval', { approvalId: id(5) }],
    ['reminder fire', { reminderId: id(6), at: '2026-11-23T09:00:00.000Z' }],
    ['transcribe', { channelMessageId: id(7) }],
  ])('recognises a %s job of the user', (_name, data) => {
    expect(concernsUser(data, footprint)).toBe(true);
  });

  it.each([
    ['another user', { userId: id(50) }],
    ['another turn', { turnId: id(51) }],
    ['no payload', null],
    ['a reply to a chat', { to: { channel: 'telegram', chat_id: '1' }, text: 'x' }],
  ])('leaves %s alone', (_name, data) => {
    expect(concernsUser(data, footprint)).toBe(false);
  });
});
