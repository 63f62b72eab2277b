-- Up Migration
-- What an operator sets on a user (docs/api.md#operators): disabled_at (keys answer 403
-- user_disabled, chats get a short reply), daily_token_budget (NULL = DAILY_TOKEN_BUDGET,
-- 0 = none), and erasing_at (an erasure was asked for: keys are refused while the job runs).
ALTER TABLE users
  ADD COLUMN disabled_at TIMESTAMPTZ,
  ADD COLUMN daily_token_budget BIGINT CHECK (daily_token_budget >= 0),
  ADD COLUMN erasing_at TIMESTAMPTZ;

-- Down Migration
ALTER TABLE users DROP COLUMN disabled_at, DROP COLUMN daily_token_budget, DROP COLUMN erasing_at;
