-- Up Migration
-- One row per tool call: the task of the event stream and the execution record of the tool.
-- entity_id is chosen before the first attempt, so a retried create cannot insert twice.
CREATE TABLE tasks (
  id UUID PRIMARY KEY DEFAULT gen_random_uuid(),
  turn_id UUID NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  ref TEXT NOT NULL,
  position INTEGER NOT NULL,
  iteration INTEGER NOT NULL,
  call_id TEXT NOT NULL,
  tool_name TEXT NOT NULL,
  arguments JSONB NOT NULL,
  description TEXT NOT NULL,
  mutates BOOLEAN NOT NULL,
  status TEXT NOT NULL DEFAULT 'pending' CHECK (status IN
    ('pending', 'awaiting_approval', 'approved', 'in_progress', 'completed', 'failed', 'skipped')),
  failure TEXT CHECK (failure IN ('invalid', 'error')),
  asked BOOLEAN NOT NULL DEFAULT false,
  entity_id UUID NOT NULL DEFAULT gen_random_uuid(),
  result TEXT,
  error TEXT,
  started_at TIMESTAMPTZ,
  finished_at TIMESTAMPTZ,
  duration_ms INTEGER,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  CONSTRAINT uq_tasks_turn_position UNIQUE (turn_id, position)
);

-- Down Migration
DROP TABLE tasks;
