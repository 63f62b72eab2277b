/**
 * Webhook bodies in the shapes Telegram and Meta send, copied verbatim from the shared fixtures
 * (fixtures/telegram/*.json, fixtures/whatsapp/*.json) so tests need nothing outside the repo.
 * Tests clone them (`fixture(...)`) and change ids, senders and texts.
 */

/** telegram/private-text.json */
export const telegramPrivateText = {
  update_id: 918273645,
  message: {
    message_id: 311,
    from: {
      id: 5550001,
      is_bot: false,
      first_name: 'Tiago',
      username: 'tiago_r',
      language_code: 'pt-br',
    },
    chat: {
      id: 5550001,
      first_name: 'Tiago',
      username: 'tiago_r',
      type: 'private',
    },
    date: 1763800000,
    text: 'criar hábito meditação diária',
  },
};

/** telegram/group-mention.json */
export const telegramGroupMention = {
  update_id: 918273646,
  message: {
    message_id: 88,
    from: {
      id: 5550002,
      is_bot: false,
      first_name: 'Maria',
      language_code: 'pt-br',
    },
    chat: {
      id: -1001234567890,
      title: 'Família',
      type: 'supergroup',
    },
    date: 1763800060,
    text: '@nexo_assistant_bot lista meus hábitos',
    entities: [
      {
        offset: 0,
        length: 19,
        type: 'mention',
      },
    ],
  },
};

/** telegram/callback-query.json */
export const telegramCallbackQuery = {
  update_id: 918273647,
  callback_query: {
    id: '4382bfdwdsb323b2d9',
    from: {
      id: 5550001,
      is_bot: false,
      first_name: 'Tiago',
      language_code: 'pt-br',
    },
    message: {
      message_id: 312,
      from: {
        id: 7000000001,
        is_bot: true,
        first_name: 'Nexo',
        username: 'nexo_assistant_bot',
      },
      chat: {
        id: 5550001,
        first_name: 'Tiago',
        type: 'private',
      },
      date: 1763800005,
      text: 'Criar a pasta "Trabalho"?',
      reply_markup: {
        inline_keyboard: [
          [
            {
              text: '✅ Aprovar',
              callback_data: '<whatever the bot put here, at most 64 bytes>',
            },
            {
              text: '❌ Rejeitar',
              callback_data: '<…>',
            },
          ],
        ],
      },
    },
    chat_instance: '-7366390237541896512',
    data: '<the callback_data of the pressed button>',
  },
};

/** telegram/photo.json */
export const telegramPhoto = {
  update_id: 918273648,
  message: {
    message_id: 313,
    from: {
      id: 5550001,
      is_bot: false,
      first_name: 'Tiago',
    },
    chat: {
      id: 5550001,
      first_name: 'Tiago',
      type: 'private',
    },
    date: 1763800120,
    photo: [
      {
        file_id: 'AgACAgEAAxkBAAIBQ2',
        file_unique_id: 'AQADx6',
        file_size: 1234,
        width: 90,
        height: 67,
      },
      {
        file_id: 'AgACAgEAAxkBAAIBQ3',
        file_unique_id: 'AQADx7',
        file_size: 40211,
        width: 800,
        height: 600,
      },
    ],
    caption: 'olha isso',
  },
};

/** telegram/edited-message.json */
export const telegramEditedMessage = {
  update_id: 918273649,
  edited_message: {
    message_id: 311,
    from: {
      id: 5550001,
      is_bot: false,
      first_name: 'Tiago',
    },
    chat: {
      id: 5550001,
      first_name: 'Tiago',
      type: 'private',
    },
    date: 1763800000,
    edit_date: 1763800200,
    text: 'criar hábito meditação (editado)',
  },
};

/** whatsapp/text.json */
export const whatsappText = {
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: {
              display_phone_number: '15550783881',
              phone_number_id: '106540352242922',
            },
            contacts: [
              {
                profile: {
                  name: 'Maria Souza',
                },
                wa_id: '5511987654321',
              },
            ],
            messages: [
              {
                from: '5511987654321',
                id: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjNFQjBDMEE1RTk4RTRBQkQxNkIzAA==',
                timestamp: '1763800300',
                type: 'text',
                text: {
                  body: 'me lembra de beber água às 15h',
                },
              },
            ],
          },
        },
      ],
    },
  ],
};

/** whatsapp/button-reply.json */
export const whatsappButtonReply = {
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: {
              display_phone_number: '15550783881',
              phone_number_id: '106540352242922',
            },
            contacts: [
              {
                profile: {
                  name: 'Maria Souza',
                },
                wa_id: '5511987654321',
              },
            ],
            messages: [
              {
                context: {
                  from: '15550783881',
                  id: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjdBQkM2RTc4OTlGQTEyMzQ1AA==',
                },
                from: '5511987654321',
                id: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjRGQTJDMkE3QjZBNUVEMjQ1QkY2AA==',
                timestamp: '1763800360',
                type: 'interactive',
                interactive: {
                  type: 'button_reply',
                  button_reply: {
                    id: '<the reply id the bot set, at most 256 characters>',
                    title: 'Aprovar',
                  },
                },
              },
            ],
          },
        },
      ],
    },
  ],
};

/** whatsapp/status.json */
export const whatsappStatus = {
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: {
              display_phone_number: '15550783881',
              phone_number_id: '106540352242922',
            },
            statuses: [
              {
                id: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABEYEjdBQkM2RTc4OTlGQTEyMzQ1AA==',
                status: 'delivered',
                timestamp: '1763800310',
                recipient_id: '5511987654321',
                conversation: {
                  id: 'b8d4c5e3a1f2',
                  origin: {
                    type: 'service',
                  },
                },
                pricing: {
                  billable: false,
                  pricing_model: 'PMP',
                  category: 'service',
                },
              },
            ],
          },
        },
      ],
    },
  ],
};

/** whatsapp/image.json */
export const whatsappImage = {
  object: 'whatsapp_business_account',
  entry: [
    {
      id: '102290129340398',
      changes: [
        {
          field: 'messages',
          value: {
            messaging_product: 'whatsapp',
            metadata: {
              display_phone_number: '15550783881',
              phone_number_id: '106540352242922',
            },
            contacts: [
              {
                profile: {
                  name: 'Maria Souza',
                },
                wa_id: '5511987654321',
              },
            ],
            messages: [
              {
                from: '5511987654321',
                id: 'wamid.HBgNNTUxMTk4NzY1NDMyMRUCABIYFjVBMUI5QzhEN0U2RjUwNDMyMUEyAA==',
                timestamp: '1763800400',
                type: 'image',
                image: {
                  mime_type: 'image/jpeg',
                  sha256: 'qKzvTkzOk1nYdXrW5o0z3zT0Zl1b3nCw0kzUWJ1jH6Y=',
                  id: '1548871829348871',
                  caption: 'recibo',
                },
              },
            ],
          },
        },
      ],
    },
  ],
};

/** A deep copy to change freely. */
export function fixture<T>(value: T): T {
  return structuredClone(value);
}
