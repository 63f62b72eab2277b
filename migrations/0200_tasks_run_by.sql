-- Up Migration
-- A task handed on by the tool that finished before it runs in that tool's job: run_by names the
-- task whose job it is, so the job's next run after a crash takes it up (docs/architecture.md).
-- NULL: the task has a job of its own (`task.<id>`).
ALTER TABLE tasks ADD COLUMN run_by UUID;

-- Down Migration
ALTER TABLE tasks DROP COLUMN run_by;
