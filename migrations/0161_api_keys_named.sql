-- Up Migration
-- Several named keys per user, told apart by a short prefix of the key (never the secret);
-- last_used_at is written at most once a minute per key and gateway (see http/key-usage.ts).
-- Keys made before this migration show the prefix 'ak_'.
ALTER TABLE api_keys
  ADD COLUMN name TEXT NOT NULL DEFAULT 'default',
  ADD COLUMN prefix TEXT NOT NULL DEFAULT 'ak_',
  ADD COLUMN last_used_at TIMESTAMPTZ;

-- Down Migration
ALTER TABLE api_keys DROP COLUMN name, DROP COLUMN prefix, DROP COLUMN last_used_at;
