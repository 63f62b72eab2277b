-- Up Migration
-- The erasure sweep deletes deliveries past their retention (docs/channels.md#delivery), oldest
-- first, a batch at a time, keeping those of a chat turn whose events a Redis come back empty
-- would queue again (packages/shared/src/lost-redis-sweeper.ts): a turn's event names its turn
-- only by its job id, so the turn is recorded with its parts. Those already recorded of such turns
-- get theirs here.
ALTER TABLE deliveries ADD COLUMN turn_id UUID;
UPDATE deliveries d SET turn_id = t.id
  FROM turns t CROSS JOIN LATERAL jsonb_array_elements(t.chat_events) AS e(entry)
  WHERE t.origin IS NOT NULL AND t.chat_events <> '[]'::jsonb
    AND (t.finished_at IS NULL OR t.finished_at > NOW() - INTERVAL '24 hours')
    AND d.delivery_key = 'deliver.' || (e.entry->>'key');
CREATE INDEX idx_deliveries_sent ON deliveries(sent_at);

-- Down Migration
DROP INDEX idx_deliveries_sent;
ALTER TABLE deliveries DROP COLUMN turn_id;
