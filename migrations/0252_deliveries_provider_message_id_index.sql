-- Up Migration
-- A WhatsApp status webhook names the message it reports on by the provider's id: a notice refused
-- outside the 24-hour window is found by it (docs/channels.md#delivery).
CREATE INDEX idx_deliveries_provider_message_id ON deliveries(provider_message_id) WHERE provider_message_id IS NOT NULL;

-- Down Migration
DROP INDEX idx_deliveries_provider_message_id;
