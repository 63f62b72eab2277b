-- Up Migration
-- A channel message over the user's message rate is still stored, in a turn that may not start
-- before the rate limit's window allows (a delayed lane job wakes the session then).
ALTER TABLE turns ADD COLUMN start_after TIMESTAMPTZ;

-- Down Migration
ALTER TABLE turns DROP COLUMN start_after;
