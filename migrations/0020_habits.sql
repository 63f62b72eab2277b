-- Up Migration
-- name_key is the case- and accent-folded name the model's habit_id is matched against.
CREATE TABLE habits (
  id UUID PRIMARY KEY,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  name VARCHAR(100) NOT NULL CHECK (btrim(name) <> ''),
  name_key TEXT NOT NULL,
  frequency TEXT CHECK (frequency IN ('daily', 'weekdays', 'weekly', 'monthly')),
  description TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_habits_user_key ON habits(user_id, name_key);

-- Down Migration
DROP TABLE habits;
