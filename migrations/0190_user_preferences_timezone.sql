-- Up Migration
-- The user's IANA time zone (docs/api.md#preferences, docs/tools.md#times): reminders without an offset, their repeats and the
-- clock the model is shown are in this zone. The application fills it from DEFAULT_TIMEZONE (or a
-- WhatsApp number's country) for new users; the default here only backfills existing rows.
ALTER TABLE user_preferences ADD COLUMN timezone TEXT NOT NULL DEFAULT 'UTC';

-- Down Migration
ALTER TABLE user_preferences DROP COLUMN timezone;
