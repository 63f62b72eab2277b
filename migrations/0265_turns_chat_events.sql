-- Up Migration
-- A chat turn's events sent to its chat (its answer, approval requests, questions, error), kept
-- once published: a Redis that comes back empty has lost the delivery jobs not yet sent, and
-- they are queued again from here under their own ids (packages/shared/src/lost-redis-sweeper.ts).
ALTER TABLE turns ADD COLUMN chat_events JSONB NOT NULL DEFAULT '[]'::jsonb;

-- Down Migration
ALTER TABLE turns DROP COLUMN chat_events;
