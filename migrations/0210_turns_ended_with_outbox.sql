-- Up Migration
-- The outbox sweeper finds turns with entries left behind without an index that depends on
-- `outbox`: PostgreSQL makes an update HOT only when no column an index uses changes, predicates
-- included, and idx_turns_outbox_pending made nearly every update of a running turn write into
-- each of the table's indexes (124 WAL records per turn of the bench against 97 without it).
-- Unfinished turns are found through idx_turns_lane, finished ones through this column, which
-- changes only when a turn ends with entries and when they are removed. Adding a stored column
-- rewrites the table once.
ALTER TABLE turns ADD COLUMN ended_with_outbox BOOLEAN
  GENERATED ALWAYS AS (status IN ('completed', 'limit_reached', 'failed', 'cancelled') AND outbox <> '[]'::jsonb) STORED;
CREATE INDEX idx_turns_ended_with_outbox ON turns(id) WHERE ended_with_outbox;
DROP INDEX idx_turns_outbox_pending;

-- Down Migration
CREATE INDEX idx_turns_outbox_pending ON turns(id) WHERE outbox <> '[]'::jsonb;
DROP INDEX idx_turns_ended_with_outbox;
ALTER TABLE turns DROP COLUMN ended_with_outbox;
