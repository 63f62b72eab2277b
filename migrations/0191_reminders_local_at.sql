-- Up Migration
-- The wall-clock time, in the user's zone, a reminder was set for (docs/tools.md#times). Repeats keep its
-- time of day (and weekday, day of the month) across daylight-saving changes, even after a
-- spring-forward gap moved one occurrence; a change of the user's zone keeps it. NULL (rows from
-- before): the wall-clock time of `at` in the user's zone.
ALTER TABLE reminders ADD COLUMN local_at TIMESTAMP;

-- Down Migration
ALTER TABLE reminders DROP COLUMN local_at;
