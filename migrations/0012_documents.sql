-- Up Migration
CREATE TABLE documents (
  id UUID PRIMARY KEY,
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  folder_id UUID REFERENCES folders(id) ON DELETE CASCADE,
  title VARCHAR(255) NOT NULL CHECK (btrim(title) <> ''),
  title_key TEXT NOT NULL,
  content TEXT NOT NULL DEFAULT '',
  created_at TIMESTAMPTZ NOT NULL DEFAULT NOW(),
  updated_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);
CREATE INDEX idx_documents_user_key ON documents(user_id, title_key);
CREATE INDEX idx_documents_folder ON documents(folder_id);

-- Down Migration
DROP TABLE documents;
