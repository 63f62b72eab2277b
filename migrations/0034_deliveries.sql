-- Up Migration
-- One row per outbound message part the provider accepted, keyed by the deliveries job id and
-- the part's index: a retried or re-queued job skips the parts already sent.
CREATE TABLE deliveries (
  delivery_key TEXT NOT NULL,
  part INTEGER NOT NULL,
  channel TEXT NOT NULL,
  recipient TEXT NOT NULL,
  provider_message_id TEXT,
  sent_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  PRIMARY KEY (delivery_key, part)
);

-- Down Migration
DROP TABLE deliveries;
