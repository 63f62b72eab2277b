-- Up Migration
CREATE TABLE goals (
  id UUID PRIMARY KEY,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  habit_id UUID REFERENCES habits(id) ON DELETE SET NULL,
  title VARCHAR(255) NOT NULL CHECK (btrim(title) <> ''),
  title_key TEXT NOT NULL,
  target_date DATE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_goals_user_key ON goals(user_id, title_key);
CREATE INDEX idx_goals_habit ON goals(habit_id);

-- Down Migration
DROP TABLE goals;
