-- Up Migration
-- A habit's frequency is the user's own words ("3 times a week"), shown as they are: nothing
-- schedules by it (reminders have `repeat`). The tool schema bounds its length (docs/tools.md#validation).
ALTER TABLE habits DROP CONSTRAINT habits_frequency_check;

-- Down Migration
-- NOT VALID: habits saved with other words meanwhile keep them.
ALTER TABLE habits ADD CONSTRAINT habits_frequency_check CHECK (frequency IN ('daily', 'weekdays', 'weekly', 'monthly')) NOT VALID;
