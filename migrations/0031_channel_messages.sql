-- Up Migration
-- Every inbound channel message accepted, keyed by the provider's id (Telegram update_id,
-- WhatsApp messages[].id): a redelivery hits the unique key and changes nothing. The row is
-- written in the same transaction as what the message caused (a turn, a reply, a decision),
-- which is kept so a redelivery after a crash can finish publishing it.
CREATE TABLE channel_messages (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  channel TEXT NOT NULL CHECK (channel IN ('telegram', 'whatsapp')),
  external_id TEXT NOT NULL,
  user_id UUID REFERENCES users(id) ON DELETE CASCADE,
  turn_id UUID REFERENCES turns(id) ON DELETE SET NULL,
  reply TEXT,
  decision JSONB,
  received_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  CONSTRAINT uq_channel_messages UNIQUE (channel, external_id)
);
CREATE INDEX idx_channel_messages_turn ON channel_messages(turn_id);

-- Down Migration
DROP TABLE channel_messages;
