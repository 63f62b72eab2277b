import { readTelegramUpdate } from './telegram.update';

const message = (fields: object) => ({ update_id: 1, message: { from: { id: 42 }, chat: { id: -7, type: 'group' }, ...fields } });

describe('readTelegramUpdate', () => {
  it("moves a message's entities with its text when control characters before or inside them are removed", () => {
    const text = '\u0007hi @nexo_bot, /new\u0000@nexo_bot';
    const entities = [
      { type: 'mention', offset: 4, length: 9 },
      { type: 'bot_command', offset: 15, length: 14 },
    ];
    const update = readTelegramUpdate(message({ text, entities }));
    const cleaned = update.message?.text ?? '';
    expect(update.message?.entities?.map(({ offset, length }) => cleaned.slice(offset, offset + length))).toEqual([
      '@nexo_bot',
      '/new@nexo_bot',
    ]);
  });

  it("moves a caption's entities, and leaves them where they were when nothing before them was removed", () => {
    const update = readTelegramUpdate(
      message({ caption: '\u0085@nexo_bot', caption_entities: [{ type: 'mention', offset: 1, length: 9 }] }),
    );
    expect(update.message?.caption_entities).toEqual([{ type: 'mention', offset: 0, length: 9 }]);
    // A lone surrogate becomes U+FFFD, one unit for one: nothing moves.
    const plain = readTelegramUpdate(message({ text: '\ud83d @nexo_bot', entities: [{ type: 'mention', offset: 2, length: 9 }] }));
    expect(plain.message?.entities).toEqual([{ type: 'mention', offset: 2, length: 9 }]);
  });
});
