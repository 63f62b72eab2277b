-- Up Migration
-- name_key is the case- and accent-folded name, for matching what the model calls a folder.
CREATE TABLE folders (
  id UUID PRIMARY KEY,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  parent_id UUID REFERENCES folders(id) ON DELETE CASCADE,
  name VARCHAR(100) NOT NULL CHECK (btrim(name) <> ''),
  name_key TEXT NOT NULL,
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_folders_user_key ON folders(user_id, name_key);
CREATE INDEX idx_folders_parent ON folders(parent_id);

-- Down Migration
DROP TABLE folders;
