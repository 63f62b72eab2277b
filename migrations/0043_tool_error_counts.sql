-- Up Migration
-- Tool errors by normalised message (ids, numbers, quoted values stripped), per user and tool.
-- occurrences counts within a 24 h window starting at window_started_at; an error after the
-- window starts a new one. The third occurrence in a window records a gotcha.
CREATE TABLE tool_error_counts (
  user_id UUID NOT NULL REFERENCES users(id) ON DELETE CASCADE,
  tool_name TEXT NOT NULL,
  pattern TEXT NOT NULL,
  occurrences INTEGER NOT NULL,
  window_started_at TIMESTAMPTZ NOT NULL,
  last_seen_at TIMESTAMPTZ NOT NULL,
  last_error TEXT NOT NULL
);
CREATE UNIQUE INDEX uq_tool_error_counts ON tool_error_counts(user_id, tool_name, md5(pattern));

-- Down Migration
DROP TABLE tool_error_counts;
