-- Up Migration
-- A chat voice note holds its place in its session while it is transcribed (docs/channels.md#message-content):
-- its message goes into a turn at once, as a placeholder at its input position, and the turn may not
-- start while voice_pending names one of its inputs (`{"input": n, "message": <channel_messages id>}`)
-- still waiting for its transcript, or until voice_held_until at the latest (a transcription job lost
-- for good must not block the session).
ALTER TABLE turns ADD COLUMN voice_pending JSONB NOT NULL DEFAULT '[]'::jsonb, ADD COLUMN voice_held_until TIMESTAMPTZ;

-- Down Migration
ALTER TABLE turns DROP COLUMN voice_pending, DROP COLUMN voice_held_until;
