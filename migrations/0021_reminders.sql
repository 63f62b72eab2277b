-- Up Migration
-- `at` is the next time the reminder fires; a repeating one moves it forward each time it fires.
-- A fire job only acts while `at` still equals the time it was scheduled for, so an update or a
-- delete turns the old job into a no-op.
CREATE TABLE reminders (
  id UUID PRIMARY KEY,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  habit_id UUID REFERENCES habits(id) ON DELETE SET NULL,
  text VARCHAR(500) NOT NULL CHECK (btrim(text) <> ''),
  text_key TEXT NOT NULL,
  at TIMESTAMPTZ NOT NULL,
  repeat TEXT CHECK (repeat IN ('daily', 'weekly')),
  last_fired_at TIMESTAMPTZ,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_reminders_user_key ON reminders(user_id, text_key);
CREATE INDEX idx_reminders_habit ON reminders(habit_id);

-- Down Migration
DROP TABLE reminders;
