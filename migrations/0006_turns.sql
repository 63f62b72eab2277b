-- Up Migration
-- A turn is a state machine advanced by short agent-turns jobs (docs/architecture.md).
-- version guards every transition; outbox holds events and jobs to publish after commit.
CREATE TABLE turns (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  lane_seq BIGINT GENERATED ALWAYS AS IDENTITY,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  session_id UUID NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  session_key TEXT NOT NULL,
  input TEXT NOT NULL,
  status TEXT NOT NULL DEFAULT 'queued' CHECK (status IN
    ('queued', 'running', 'awaiting_approval', 'awaiting_user', 'completed', 'limit_reached', 'failed', 'cancelled')),
  iterations INTEGER NOT NULL DEFAULT 0,
  max_iterations INTEGER,
  autonomous BOOLEAN,
  model TEXT,
  version INTEGER NOT NULL DEFAULT 0,
  claim TEXT,
  outbox JSONB NOT NULL DEFAULT '[]',
  error TEXT,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  started_at TIMESTAMPTZ,
  finished_at TIMESTAMPTZ
);
CREATE INDEX idx_turns_lane ON turns(session_id, lane_seq) WHERE status NOT IN ('completed', 'limit_reached', 'failed', 'cancelled');
CREATE INDEX idx_turns_user ON turns(user_id, created_at);

-- Down Migration
DROP TABLE turns;
