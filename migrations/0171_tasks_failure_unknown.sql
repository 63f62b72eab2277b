-- Up Migration
-- A third kind of failure: 'unknown', a non-idempotent MCP call that may have reached its server
-- before the tool worker died; it is reported, never sent again, and the turn goes on.
ALTER TABLE tasks DROP CONSTRAINT tasks_failure_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_failure_check CHECK (failure IN ('invalid', 'error', 'unknown'));

-- Down Migration
UPDATE tasks SET failure = 'error' WHERE failure = 'unknown';
ALTER TABLE tasks DROP CONSTRAINT tasks_failure_check;
ALTER TABLE tasks ADD CONSTRAINT tasks_failure_check CHECK (failure IN ('invalid', 'error'));
