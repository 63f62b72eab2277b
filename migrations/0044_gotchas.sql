-- Up Migration
-- Gotchas (docs/memory.md#gotchas): captured from repeated tool errors (source auto_detected, one per user,
-- tool and pattern) or added by the user (source manual, tool optional).
CREATE TABLE gotchas (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  tool_name TEXT,
  pattern TEXT,
  description TEXT NOT NULL,
  source TEXT NOT NULL CHECK (source IN ('auto_detected', 'manual')),
  occurrences INTEGER NOT NULL DEFAULT 0,
  first_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  last_seen_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  CHECK (source = 'manual' OR (tool_name IS NOT NULL AND pattern IS NOT NULL))
);
CREATE UNIQUE INDEX uq_gotchas_auto ON gotchas(user_id, tool_name, md5(pattern)) WHERE source = 'auto_detected';
CREATE INDEX idx_gotchas_user ON gotchas(user_id, last_seen_at DESC);

-- Down Migration
DROP TABLE gotchas;
