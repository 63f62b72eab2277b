-- Up Migration
-- A reminder that comes due while its user is disabled is skipped (nothing posted, nothing sent)
-- yet recorded as fired, so that it neither waits to go out late nor is picked up by the
-- reminder sweeper. This says that the firing at `last_fired_at` was such a skip: a fire job run
-- again for it (a retry after a crash, an older job a move left behind) must not send its notice.
ALTER TABLE reminders ADD COLUMN last_fire_skipped BOOLEAN NOT NULL DEFAULT false;

-- Down Migration
ALTER TABLE reminders DROP COLUMN last_fire_skipped;
