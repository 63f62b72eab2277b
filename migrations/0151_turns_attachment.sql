-- Up Migration
-- A photo sent with a channel message when VISION=true: only the provider's reference
-- ({"channel":"telegram","file_id":…} or {"channel":"whatsapp","media_id":…}); the image itself
-- is fetched from the provider each time the turn's model request is built, never stored.
ALTER TABLE turns ADD COLUMN attachment JSONB;

-- Down Migration
ALTER TABLE turns DROP COLUMN attachment;
