-- Up Migration
-- A voice note waiting for its transcript: what to download and where its turn goes
-- ({"ref":{"channel":…,"file_id"|"media_id":…},"session_key":…,"reply_to":{…}}). The turn is
-- created when the transcript arrives (turn_id set then), so a redelivered webhook can re-queue
-- the transcription job of a message whose first delivery crashed before queuing it.
ALTER TABLE channel_messages ADD COLUMN media JSONB;

-- Down Migration
ALTER TABLE channel_messages DROP COLUMN media;
