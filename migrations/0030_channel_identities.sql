-- Up Migration
-- A person on a channel (Telegram user id, WhatsApp wa_id) and the user they act as. The first
-- message creates a user; `/link CODE` re-points the identity. last_seen_at picks the channel
-- a notification (a reminder) goes to.
CREATE TABLE channel_identities (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  channel TEXT NOT NULL CHECK (channel IN ('telegram', 'whatsapp')),
  external_id TEXT NOT NULL,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  last_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  CONSTRAINT uq_channel_identities UNIQUE (channel, external_id)
);
CREATE INDEX idx_channel_identities_user ON channel_identities(user_id, last_seen_at DESC);

-- Down Migration
DROP TABLE channel_identities;
