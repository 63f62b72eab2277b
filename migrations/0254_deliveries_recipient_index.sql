-- Up Migration
-- What was sent to a chat is found by the chat's address: an erasure (inside DELETE /v1/me's own
-- request) deletes a user's deliveries by their identities' addresses, and a changed WhatsApp
-- number moves them to the new one inside the webhook's transaction. Without this both read the
-- whole table, which grows with every message part the system sends.
CREATE INDEX idx_deliveries_recipient ON deliveries(channel, recipient);

-- Down Migration
DROP INDEX idx_deliveries_recipient;
