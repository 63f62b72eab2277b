-- Up Migration
-- The ID registry: short refs (folder_1) the model sees, per session, for the UUIDs it never sees.
CREATE TABLE session_refs (
  session_id UUID NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  entity TEXT NOT NULL,
  n INTEGER NOT NULL,
  entity_id UUID NOT NULL,
  PRIMARY KEY (session_id, entity, n),
  CONSTRAINT uq_session_refs_entity UNIQUE (session_id, entity, entity_id)
);
-- Atomic per-session counters: two tools creating folders at once must not both get folder_3.
CREATE TABLE session_ref_counters (
  session_id UUID NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
  entity TEXT NOT NULL,
  last_n INTEGER NOT NULL,
  PRIMARY KEY (session_id, entity)
);

-- Down Migration
DROP TABLE session_ref_counters;
DROP TABLE session_refs;
