-- Up Migration
-- Chat users are admitted at most NEW_CHAT_USERS_PER_MINUTE at a time across every gateway
-- (docs/channels.md#identities-and-linking): one row holds when the newest admission's slot ends, and an
-- identity created past the rate holds when its user's turns may start.
CREATE TABLE chat_user_admissions (
  singleton BOOLEAN PRIMARY KEY DEFAULT true CHECK (singleton),
  next_at TIMESTAMPTZ NOT NULL
);
ALTER TABLE channel_identities ADD COLUMN admitted_at TIMESTAMPTZ;

-- Down Migration
ALTER TABLE channel_identities DROP COLUMN admitted_at;
DROP TABLE chat_user_admissions;
