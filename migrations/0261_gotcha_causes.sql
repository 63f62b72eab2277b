-- Up Migration
-- What a captured gotcha's error says of the tool (docs/memory.md#gotchas), which sets the advice
-- the model is given with it: `arguments` (the call's own problem: refused arguments, or the tool's
-- answer that it could not do it), `timeout`, `unavailable` (its MCP server could not be reached)
-- or `failure` (it failed on its side after its attempts); null for a manual gotcha. Failures that
-- say nothing about the tool (an outcome unknown after a crash, a job the tool worker could not
-- run) are no longer counted: those captured before are removed.
ALTER TABLE gotchas ADD COLUMN cause TEXT CHECK (cause IN ('arguments', 'timeout', 'unavailable', 'failure'));
DELETE FROM gotchas
WHERE source = 'auto_detected' AND (pattern LIKE 'The outcome of % is unknown:%' OR pattern LIKE '% the tool worker could not run it');
DELETE FROM tool_error_counts WHERE pattern LIKE 'The outcome of % is unknown:%' OR pattern LIKE '% the tool worker could not run it';
UPDATE gotchas SET cause = CASE
    WHEN pattern LIKE '% failed after %: timed out after <n> s' THEN 'timeout'
    WHEN pattern LIKE '% failed after %: %MCP server "…"%' THEN 'unavailable'
    WHEN pattern LIKE '% failed after %' THEN 'failure'
    ELSE 'arguments'
  END
WHERE source = 'auto_detected';
ALTER TABLE gotchas ADD CONSTRAINT gotchas_cause CHECK ((source = 'manual') = (cause IS NULL));

-- Down Migration
ALTER TABLE gotchas DROP COLUMN cause;
