-- Up Migration
-- Full-text search over documents: title (weight A) and content (weight B), each in Portuguese
-- and English. Only the first 100,000 characters of content are indexed: a tsvector holds at
-- most 1 MB, and four of them are concatenated here.
ALTER TABLE documents ADD COLUMN search_vector tsvector GENERATED ALWAYS AS (
  setweight(to_tsvector('assistant_portuguese', title), 'A') ||
  setweight(to_tsvector('assistant_english', title), 'A') ||
  setweight(to_tsvector('assistant_portuguese', left(content, 100000)), 'B') ||
  setweight(to_tsvector('assistant_english', left(content, 100000)), 'B')
) STORED;
CREATE INDEX idx_documents_search ON documents USING GIN (search_vector);

-- Down Migration
ALTER TABLE documents DROP COLUMN search_vector;
