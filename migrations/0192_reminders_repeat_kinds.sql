-- Up Migration
-- Repeats computed in the user's zone: weekdays (Monday to Friday) and monthly join daily and weekly.
ALTER TABLE reminders DROP CONSTRAINT reminders_repeat_check;
ALTER TABLE reminders ADD CONSTRAINT reminders_repeat_check CHECK (repeat IN ('daily', 'weekdays', 'weekly', 'monthly'));

-- Down Migration
ALTER TABLE reminders DROP CONSTRAINT reminders_repeat_check;
ALTER TABLE reminders ADD CONSTRAINT reminders_repeat_check CHECK (repeat IN ('daily', 'weekly'));
