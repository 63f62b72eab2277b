-- Up Migration
-- A WhatsApp user's business-scoped user id (BSUID), remembered beside their phone number, so a
-- message that comes without the number (a user with a username) reaches the same identity
-- (docs/channels.md#whatsapp-usernames-and-changed-numbers). A user known only by their BSUID has it as
-- external_id too. NULL until a webhook carries it; unique like external_id.
ALTER TABLE channel_identities ADD COLUMN bsuid TEXT;
ALTER TABLE channel_identities ADD CONSTRAINT uq_channel_identities_bsuid UNIQUE (channel, bsuid);

-- Down Migration
ALTER TABLE channel_identities DROP COLUMN bsuid;
