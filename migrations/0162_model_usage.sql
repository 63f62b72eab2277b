-- Up Migration
-- One row per recorded model call: written in the transaction that stores the step's outcome,
-- so a step retried after a crash is counted once (the (turn, iteration) key is a second guard).
-- day is the UTC day of the call: GET /v1/usage and the daily budget sum by it.
CREATE TABLE model_usage (
  turn_id UUID NOT NULL REFERENCES turns(id) ON DELETE CASCADE,
  iteration INTEGER NOT NULL,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  day DATE NOT NULL DEFAULT (NOW() AT TIME ZONE 'UTC')::date,
  prompt_tokens INTEGER NOT NULL DEFAULT 0,
  cached_prompt_tokens INTEGER NOT NULL DEFAULT 0,
  completion_tokens INTEGER NOT NULL DEFAULT 0,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  PRIMARY KEY (turn_id, iteration)
);
CREATE INDEX idx_model_usage_user_day ON model_usage(user_id, day);

-- Down Migration
DROP TABLE model_usage;
