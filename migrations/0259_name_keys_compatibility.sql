-- Up Migration
-- Name keys fold compatibility forms and drop invisible format characters (nameKey in
-- packages/shared/src/text.ts): "Oﬃce" is found as "office", "Work" pasted with a zero-width
-- space as "work". Keys written before are brought to that form, only where it changes them
-- (names holding a ligature, a full-width letter, a no-break space or a format character), so
-- every other key stays exactly as nameKey wrote it. The fold here covers the common combining
-- marks and format characters; PostgreSQL's regular expressions have no Unicode categories.
CREATE FUNCTION pg_temp.name_key(name TEXT) RETURNS TEXT LANGUAGE SQL IMMUTABLE AS $$
  SELECT btrim(regexp_replace(lower(regexp_replace(normalize(name, NFKD),
    '[\u0300-\u036f\u1ab0-\u1aff\u1dc0-\u1dff\u20d0-\u20ff\ufe20-\ufe2f\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]',
    '', 'g')), '\s+', ' ', 'g'))
$$;

CREATE FUNCTION pg_temp.key_changes(name TEXT) RETURNS BOOLEAN LANGUAGE SQL IMMUTABLE AS $$
  SELECT normalize(name, NFKD) <> normalize(name, NFD)
      OR name ~ '[\u00ad\u061c\u180e\u200b-\u200f\u202a-\u202e\u2060-\u2064\u2066-\u206f\ufeff]'
$$;

-- normalize() needs a UTF8 database; one in another encoding keeps its keys as they are.
DO $$
BEGIN
  IF current_setting('server_encoding') = 'UTF8' THEN
    UPDATE folders SET name_key = pg_temp.name_key(name) WHERE pg_temp.key_changes(name);
    UPDATE documents SET title_key = pg_temp.name_key(title) WHERE pg_temp.key_changes(title);
    UPDATE habits SET name_key = pg_temp.name_key(name) WHERE pg_temp.key_changes(name);
    UPDATE reminders SET text_key = pg_temp.name_key(text) WHERE pg_temp.key_changes(text);
    UPDATE goals SET title_key = pg_temp.name_key(title) WHERE pg_temp.key_changes(title);
  END IF;
END $$;

-- Down Migration
-- The folded keys stay: the older nameKey finds every name it found before except these few.
SELECT 1;
