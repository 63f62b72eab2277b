-- Up Migration
-- A Telegram basic group upgraded to a supergroup gets a new chat id (docs/channels.md#group-upgrades).
-- Its sessions keep the key they have, named by the basic group's id: a message from the
-- supergroup finds that id here and continues them. Written from the upgrade's service messages;
-- a supergroup comes from one group only, and a group is upgraded once.
CREATE TABLE telegram_group_upgrades (
  supergroup_id TEXT PRIMARY KEY,
  group_id TEXT NOT NULL,
  upgraded_at TIMESTAMPTZ NOT NULL DEFAULT NOW()
);

-- Down Migration
DROP TABLE telegram_group_upgrades;
