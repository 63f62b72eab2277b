-- Up Migration
-- One-time codes for `/link CODE` (POST /v1/link-codes), stored as SHA-256 hashes.
CREATE TABLE link_codes (
  code_hash TEXT PRIMARY KEY,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  expires_at TIMESTAMPTZ NOT NULL,
  used_at TIMESTAMPTZ
);
CREATE INDEX idx_link_codes_user ON link_codes(user_id);

-- Down Migration
DROP TABLE link_codes;
