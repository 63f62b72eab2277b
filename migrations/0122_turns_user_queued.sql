-- Up Migration
-- Finds a user's queued and running turns fast when their concurrency limit decides which starts next.
CREATE INDEX idx_turns_user_open ON turns(user_id, status) WHERE status IN ('queued', 'running');

-- Down Migration
DROP INDEX idx_turns_user_open;
