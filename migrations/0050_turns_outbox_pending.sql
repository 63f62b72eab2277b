-- Up Migration
-- Lets the outbox sweeper find turns whose publisher died between commit and publish.
CREATE INDEX idx_turns_outbox_pending ON turns(id) WHERE outbox <> '[]'::jsonb;

-- Down Migration
DROP INDEX idx_turns_outbox_pending;
