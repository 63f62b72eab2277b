-- Up Migration
-- The outbox sweeper finds a turn with entries left behind in two ways, neither of which keeps a
-- turn's updates from being HOT while it runs (an index on an expression of `outbox`, or with
-- `outbox` in its predicate, made every transition write a new entry into each of the table's
-- indexes: a fifth more WAL records per turn): an unfinished turn through idx_turns_lane, a
-- finished one through this column, which changes only when the turn ends with entries and when
-- those are removed. Adding a stored column rewrites the table once.
ALTER TABLE turns ADD COLUMN ended_with_outbox BOOLEAN
  GENERATED ALWAYS AS (status IN ('completed', 'limit_reached', 'failed', 'cancelled') AND outbox <> '[]'::jsonb) STORED;
CREATE INDEX idx_turns_ended_with_outbox ON turns(id) WHERE ended_with_outbox;
DROP INDEX idx_turns_outbox_pending;

-- Down Migration
CREATE INDEX idx_turns_outbox_pending ON turns(id) WHERE outbox <> '[]'::jsonb;
DROP INDEX idx_turns_ended_with_outbox;
ALTER TABLE turns DROP COLUMN ended_with_outbox;
