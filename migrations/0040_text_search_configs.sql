-- Up Migration
-- Text search configurations for documents (docs/memory.md#request-layout: Portuguese and English stemming).
-- unaccent folds accents before stemming, so "bolo de cenoura" and "Bolo de Cenóura" match; it
-- ships with PostgreSQL's contrib (the postgres:16 image and Debian's postgresql-15 have it) and
-- is a trusted extension, so a database owner may create it. Where it is missing or may not be
-- created, the configurations are plain copies and search is accent-sensitive, nothing fails.
DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_available_extensions WHERE name = 'unaccent') THEN
    CREATE EXTENSION IF NOT EXISTS unaccent;
  END IF;
EXCEPTION WHEN insufficient_privilege THEN
  RAISE NOTICE 'unaccent could not be created: document search will be accent-sensitive';
END $$;

CREATE TEXT SEARCH CONFIGURATION assistant_portuguese (COPY = portuguese);
CREATE TEXT SEARCH CONFIGURATION assistant_english (COPY = english);

DO $$
BEGIN
  IF EXISTS (SELECT 1 FROM pg_extension WHERE extname = 'unaccent') THEN
    ALTER TEXT SEARCH CONFIGURATION assistant_portuguese
      ALTER MAPPING FOR hword, hword_part, word WITH unaccent, portuguese_stem;
    ALTER TEXT SEARCH CONFIGURATION assistant_english
      ALTER MAPPING FOR hword, hword_part, word WITH unaccent, english_stem;
  END IF;
END $$;

-- Down Migration
DROP TEXT SEARCH CONFIGURATION assistant_english;
DROP TEXT SEARCH CONFIGURATION assistant_portuguese;
