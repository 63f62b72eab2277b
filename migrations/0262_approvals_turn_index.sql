-- Up Migration
-- A turn's approvals, read by the stuck-turn sweep for each unfinished turn every interval (its
-- expired ones) and by the deletion of a turn: without it each read went through every approval
-- ever kept.
CREATE INDEX idx_approvals_turn ON approvals(turn_id);

-- Down Migration
DROP INDEX idx_approvals_turn;
