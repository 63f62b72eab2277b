-- Up Migration
-- Lets the agent workers' erasure sweeper find users whose erasure job was never queued
-- without reading the whole users table every minute.
CREATE INDEX idx_users_erasing ON users(erasing_at) WHERE erasing_at IS NOT NULL;

-- Down Migration
DROP INDEX idx_users_erasing;
