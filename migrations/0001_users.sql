-- Up Migration
-- Users, with the assistant's personality columns (docs/memory.md#profile).
CREATE TABLE users (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  display_name TEXT NOT NULL,
  assistant_name TEXT NOT NULL DEFAULT 'Nexo',
  assistant_emoji TEXT,
  assistant_creature TEXT,
  assistant_tone VARCHAR(50),
  assistant_vibe TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

-- Down Migration
DROP TABLE users;
