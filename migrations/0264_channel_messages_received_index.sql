-- Up Migration
-- The erasure sweep deletes channel messages past their retention (docs/channels.md#webhooks), oldest
-- first, a batch at a time: without it each batch read the whole table.
CREATE INDEX idx_channel_messages_received ON channel_messages(received_at);

-- Down Migration
DROP INDEX idx_channel_messages_received;
