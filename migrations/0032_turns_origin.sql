-- Up Migration
-- Where a channel turn's answers go ({"channel":"telegram","chat_id":…} or
-- {"channel":"whatsapp","wa_id":…}); NULL for turns from the HTTP API.
ALTER TABLE turns ADD COLUMN origin JSONB;

-- Down Migration
ALTER TABLE turns DROP COLUMN origin;
