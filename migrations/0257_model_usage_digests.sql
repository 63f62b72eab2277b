-- Up Migration
-- A session digest's model call is counted like a turn's (docs/memory.md#session-digests): its
-- row names the session instead of a turn and its iteration, and is written in the transaction
-- that appends the digest to MEMORY, so a retried digest job counts each call once.
ALTER TABLE model_usage DROP CONSTRAINT model_usage_pkey;
ALTER TABLE model_usage ALTER COLUMN turn_id DROP NOT NULL, ALTER COLUMN iteration DROP NOT NULL;
ALTER TABLE model_usage ADD CONSTRAINT model_usage_turn_iteration_key UNIQUE (turn_id, iteration);
ALTER TABLE model_usage ADD COLUMN session_id UUID REFERENCES sessions(id) ON DELETE CASCADE;
ALTER TABLE model_usage ADD CONSTRAINT model_usage_turn_or_session
  CHECK ((turn_id IS NOT NULL AND iteration IS NOT NULL AND session_id IS NULL) OR (turn_id IS NULL AND iteration IS NULL AND session_id IS NOT NULL));

-- Down Migration
DELETE FROM model_usage WHERE turn_id IS NULL;
ALTER TABLE model_usage DROP CONSTRAINT model_usage_turn_or_session;
ALTER TABLE model_usage DROP COLUMN session_id;
ALTER TABLE model_usage DROP CONSTRAINT model_usage_turn_iteration_key;
ALTER TABLE model_usage ADD PRIMARY KEY (turn_id, iteration);
