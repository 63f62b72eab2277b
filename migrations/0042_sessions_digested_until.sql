-- Up Migration
-- The id of the last message a session digest has summarised (0: none yet). It moves only in
-- the transaction that appends the digest to MEMORY, so a failed digest loses nothing.
ALTER TABLE sessions ADD COLUMN digested_until BIGINT NOT NULL DEFAULT 0;

-- Down Migration
ALTER TABLE sessions DROP COLUMN digested_until;
