-- Up Migration
-- A UUID in an MCP server's result as the server wrote it, when that is not PostgreSQL's lowercase
-- form (docs/tools.md#mcp-tools): a server that writes capitals may compare ids as text, so its ref
-- is translated back to the very text it gave. NULL for every other ref.
ALTER TABLE session_refs ADD COLUMN written_as TEXT;

-- Down Migration
ALTER TABLE session_refs DROP COLUMN written_as;
