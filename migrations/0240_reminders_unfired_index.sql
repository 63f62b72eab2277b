-- Up Migration
-- The reminder sweeper (services/agent-worker/src/reminders/reminder-sweeper.ts) looks for
-- unfired reminders past their time once a minute; fired one-off reminders stay in the table.
CREATE INDEX idx_reminders_unfired ON reminders(at) WHERE last_fired_at IS NULL OR last_fired_at < at;

-- Down Migration
DROP INDEX idx_reminders_unfired;
