-- Up Migration
-- A notice's text (a reminder's), kept with the parts sent for it; NULL for every other delivery.
-- WhatsApp may report a notice refused outside its 24-hour window only later, by a status webhook
-- that names the message but not its text, which is sent again from here (docs/channels.md#delivery).
-- Erased with the user's deliveries, by recipient.
ALTER TABLE deliveries ADD COLUMN notice TEXT;

-- Down Migration
ALTER TABLE deliveries DROP COLUMN notice;
