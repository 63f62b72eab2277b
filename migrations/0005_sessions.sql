-- Up Migration
-- A session is a conversation under a key (agent:main:main, agent:main:telegram:direct:42, …).
-- Resetting a session archives it and starts a new row under the same key.
CREATE TABLE sessions (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  session_key TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  last_activity_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  archived_at TIMESTAMPTZ
);
CREATE UNIQUE INDEX uq_sessions_active_key ON sessions(user_id, session_key) WHERE archived_at IS NULL;

-- Down Migration
DROP TABLE sessions;
