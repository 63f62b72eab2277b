-- Up Migration
-- Telegram counts update ids per bot: a new bot (a changed TELEGRAM_BOT_TOKEN) starts a sequence
-- of its own, which may repeat ids already recorded, and its updates must not be taken for
-- redeliveries. A message is unique per channel, bot (its id; '' for WhatsApp, whose message ids
-- are unique, and for rows recorded before this) and provider id.
ALTER TABLE channel_messages ADD COLUMN bot_id TEXT NOT NULL DEFAULT '';
ALTER TABLE channel_messages DROP CONSTRAINT uq_channel_messages;
ALTER TABLE channel_messages ADD CONSTRAINT uq_channel_messages UNIQUE (channel, bot_id, external_id);

-- Down Migration
ALTER TABLE channel_messages DROP CONSTRAINT uq_channel_messages;
-- Two bots' messages of one id cannot both stay: the later one goes.
DELETE FROM channel_messages a USING channel_messages b
  WHERE a.channel = b.channel AND a.external_id = b.external_id AND (a.received_at, a.id) > (b.received_at, b.id);
ALTER TABLE channel_messages ADD CONSTRAINT uq_channel_messages UNIQUE (channel, external_id);
ALTER TABLE channel_messages DROP COLUMN bot_id;
