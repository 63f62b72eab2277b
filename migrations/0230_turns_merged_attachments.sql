-- Up Migration
-- The photos of messages merged into a queued turn (if_busy=merge), as turns.attachment holds the
-- photo of turns.input: [{"input": n, "ref": {…}}], n the message's place in the turn (1 is the
-- first of merged_inputs). The model sees each photo with its own message.
ALTER TABLE turns ADD COLUMN merged_attachments JSONB NOT NULL DEFAULT '[]';

-- Down Migration
ALTER TABLE turns DROP COLUMN merged_attachments;
