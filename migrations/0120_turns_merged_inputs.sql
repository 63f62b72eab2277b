-- Up Migration
-- Messages merged into a queued turn (if_busy=merge, the default on channels), in arrival order
-- after turns.input: the turn's model sees each as a user message of its own.
ALTER TABLE turns ADD COLUMN merged_inputs TEXT[] NOT NULL DEFAULT '{}';

-- Down Migration
ALTER TABLE turns DROP COLUMN merged_inputs;
