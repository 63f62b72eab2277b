-- Up Migration
-- When an MCP tool's request was (about to be) sent, recorded durably before sending: a re-run
-- that finds it set on an unfinished task knows the call may already have happened (docs/tools.md#mcp-tools).
ALTER TABLE tasks ADD COLUMN sent_at TIMESTAMPTZ;

-- Down Migration
ALTER TABLE tasks DROP COLUMN sent_at;
